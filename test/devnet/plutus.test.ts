import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { BlockFrostAPI } from '@blockfrost/blockfrost-js'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { PROTOCOL_PARAMETERS } from '../../devnet/chain-a/params.ts'
import type { Output } from '../../devnet/chain-a/types.ts'
import { exUnitsFee } from '../../srv/chains/chain-a/plutus.ts'
import { ADA, buildTx, getJson, plutusData, startDevnet, submitHttp, type TxSpec } from '../support/devnet.ts'
import fixture from '../fixtures/plutus/redeemer-equals-datum.plutus.json'
import { redeemerEqualsDatum } from '../fixtures/plutus/validator.ts'

/**
 * Phase two on the devnet: a Plutus V3 validator (redeemer must equal datum) guards outputs; the
 * devnet runs it, checks redeemers, datums, collateral, execution units and the script data hash,
 * and a failing transaction marked is_valid = false pays with its collateral.
 */

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
const validator = CSL.PlutusScript.from_bytes_v3(Buffer.from(fixture.cborHex, 'hex'))
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(validator.hash())).to_address().to_bech32()
const GENEROUS = { mem: 1_000_000, steps: 500_000_000 }

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'plutus-test' })
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  devnet.produceBlock()
})
afterAll(() => devnet.stop())

const unspent = (address: string) => devnet.ledger.unspentAt(address).filter(o => !devnet.ledger.pendingView.isSpent(o.ref))
/** The wallet's ADA-only outputs, largest first. */
const adaOnly = (address: string) => unspent(address).filter(o => o.value.assets.size === 0).sort((a, b) => Number(b.value.coin - a.value.coin))
const outputAt = (ref: string) => devnet.ledger.outputs.get(ref)!

function submitAndInclude(cbor: Uint8Array): string {
  const hash = devnet.submit(cbor)
  expect(devnet.produceBlock().txs).toContain(hash)
  return hash
}

/** Locks 10 ADA at the script address under the datum, inline or by hash; answers the locked output. */
function lock(datum: unknown, how: 'inline' | 'hash' = 'inline'): Output {
  const data = plutusData(datum)
  const hash = submitAndInclude(buildTx({
    inputs: [adaOnly(w1.address)[0]],
    outputs: [{ address: scriptAddress, coin: 10n * ADA, datum: how === 'inline' ? { inline: data } : { hash: data } }],
    signers: [w1.payment],
  }))
  return outputAt(`${hash}#0`)
}

/** Spends a locked output (plus a wallet input for the fee) to wallet-2, with the given redeemer. */
function spend(locked: Output, redeemer: unknown, overrides: Partial<TxSpec> & { exUnits?: { mem: number; steps: number } } = {}): Uint8Array {
  const [funding, collateral] = adaOnly(w1.address)
  const inputs = overrides.inputs ?? [locked, funding]
  const index = inputs.map(i => i.ref).sort(compareRefs).indexOf(locked.ref)
  const { mem, steps } = overrides.exUnits ?? GENEROUS
  return buildTx({
    inputs,
    outputs: [{ address: w2.address, coin: 5n * ADA }],
    change: w1.address,
    plutusScripts: [validator],
    redeemers: [{ tag: 'spend', index, data: plutusData(redeemer), mem, steps }],
    collateral: [collateral],
    signers: [w1.payment],
    ...overrides,
  })
}

function compareRefs(a: string, b: string) {
  const [hashA, indexA] = a.split('#')
  const [hashB, indexB] = b.split('#')
  return hashA === hashB ? Number(indexA) - Number(indexB) : hashA < hashB ? -1 : 1
}

async function evaluateHttp(cbor: Uint8Array, query = '') {
  const response = await fetch(`${devnet.url}/utils/txs/evaluate${query}`, { method: 'POST', headers: { 'Content-Type': 'application/cbor' }, body: Buffer.from(cbor).toString('hex') })
  return { status: response.status, body: await response.json() as any }
}

/** The transaction with exactly the execution units the devnet's evaluation reports. */
async function withEvaluatedUnits(build: (exUnits: { mem: number; steps: number }) => Uint8Array) {
  const { body } = await evaluateHttp(build(GENEROUS))
  const { memory, steps } = body.result.EvaluationResult['spend:0']
  return { cbor: build({ mem: memory, steps }), exUnits: { mem: memory, steps } }
}

async function expectRejected(cbor: Uint8Array, reason: RegExp) {
  const mempool = devnet.ledger.mempoolTransactions().length
  const { status, body } = await submitHttp(devnet, cbor)
  expect({ status, message: body.message }).toEqual({ status: 400, message: expect.stringMatching(reason) })
  expect(devnet.ledger.mempoolTransactions()).toHaveLength(mempool)
}

it('uses the checked-in validator, which is what the plu-ts source compiles to', () => {
  expect(redeemerEqualsDatum()).toEqual(fixture)
  expect(validator.language_version().kind()).toBe(CSL.LanguageKind.PlutusV3)
})

describe('spending script-locked outputs', () => {
  it('accepts a matching redeemer for an inline datum, with the execution units the script needs', async () => {
    const locked = lock({ int: 42 })
    const { cbor, exUnits } = await withEvaluatedUnits(units => spend(locked, { int: 42 }, { exUnits: units }))
    expect(exUnits.mem).toBeGreaterThan(1000)
    expect(exUnits.mem).toBeLessThan(100_000)
    expect(exUnits.steps).toBeGreaterThan(1_000_000)
    expect(exUnits.steps).toBeLessThan(100_000_000)

    const { status, body: hash } = await submitHttp(devnet, cbor)
    expect(status).toBe(200)
    expect(devnet.produceBlock().txs).toContain(hash)
    expect(outputAt(locked.ref).spentBy).toBe(hash)
    expect((await getJson(devnet, `/txs/${hash}`)).body).toMatchObject({ valid_contract: true, redeemer_count: 1 })
    const utxos = (await getJson(devnet, `/txs/${hash}/utxos`)).body
    expect(utxos.inputs.filter((i: any) => i.collateral)).toHaveLength(1)
    expect(utxos.inputs.find((i: any) => `${i.tx_hash}#${i.output_index}` === locked.ref)).toMatchObject({ address: scriptAddress, inline_datum: plutusData({ int: 42 }).to_hex() })
  })

  it('accepts a datum-hash output spent with its datum in the witness set', () => {
    const datum = { constructor: 0, fields: [{ bytes: 'cafe' }, { int: 7 }] }
    const locked = lock(datum, 'hash')
    expect(locked.dataHash).toBe(CSL.hash_plutus_data(plutusData(datum)).to_hex())
    submitAndInclude(spend(locked, datum, { datums: [plutusData(datum)] }))
    expect(outputAt(locked.ref).spentBy).not.toBeNull()
  })

  it('runs a validator given as a reference script, and charges the reference-script fee', () => {
    const holder = submitAndInclude(buildTx({ inputs: [adaOnly(w1.address)[0]], outputs: [{ address: w1.address, coin: 20n * ADA, scriptRef: validator }], signers: [w1.payment] }))
    const reference = outputAt(`${holder}#0`)
    expect(reference.referenceScriptHash).toBe(validator.hash().to_hex())
    const locked = lock({ int: 5 })
    const withoutFee = spend(locked, { int: 5 }, { plutusScripts: [], referenceInputs: [reference] })
    expect(() => devnet.submit(withoutFee)).toThrow(/^FeeTooSmallUTxO: fee \d+ is below the minimum \d+ \(\d+ for the size, \d+ for scripts\)$/)
    const scriptBytes = validator.bytes().length
    const fee = 44n * BigInt(withoutFee.length + 10) + 155_381n + exUnitsFee(GENEROUS, PROTOCOL_PARAMETERS) + 15n * BigInt(scriptBytes)
    submitAndInclude(spend(locked, { int: 5 }, { plutusScripts: [], referenceInputs: [reference], fee }))
    expect(outputAt(locked.ref).spentBy).not.toBeNull()
  })
})

describe('phase two rejections', () => {
  let locked: Output
  beforeAll(() => { locked = lock({ int: 42 }) })

  it('ValidationTagMismatch with the script failure and its trace for a wrong redeemer', async () => {
    await expectRejected(spend(locked, { int: 41 }),
      /^ValidationTagMismatch: the transaction is marked is_valid = true but its scripts fail: ScriptFailure: the spend script of redeemer [01] failed: .*\(trace: redeemer does not match datum\)$/)
    expect(outputAt(locked.ref).spentBy).toBeNull()
  })

  it('ValidationTagMismatch when a redeemer declares fewer execution units than the script needs', async () => {
    const { exUnits } = await withEvaluatedUnits(units => spend(locked, { int: 42 }, { exUnits: units }))
    await expectRejected(spend(locked, { int: 42 }, { exUnits: { mem: exUnits.mem, steps: exUnits.steps - 1 } }),
      new RegExp(`ScriptFailure: the spend script of redeemer [01] failed: the script ran out of budget: it needs mem ${exUnits.mem} and steps ${exUnits.steps}, the redeemer declares mem ${exUnits.mem} and steps ${exUnits.steps - 1}$`))
  })

  it('pays with the collateral when a failing transaction is marked is_valid = false', async () => {
    const failing = lock({ int: 1 })
    const [, collateral] = adaOnly(w1.address)
    const total = 5n * ADA
    const cbor = spend(failing, { int: 2 }, { isValid: false, collateralReturn: { address: w1.address, coin: collateral.value.coin - total }, totalCollateral: total })
    const hash = submitAndInclude(cbor)

    expect(outputAt(failing.ref).spentBy).toBeNull()
    expect(outputAt(collateral.ref).spentBy).toBe(hash)
    const tx = (await getJson(devnet, `/txs/${hash}`)).body
    expect(tx).toMatchObject({ valid_contract: false, fees: String(total) })
    const utxos = (await getJson(devnet, `/txs/${hash}/utxos`)).body
    expect(utxos.outputs).toEqual([expect.objectContaining({ address: w1.address, collateral: true, amount: [{ unit: 'lovelace', quantity: String(collateral.value.coin - total) }] })])
    expect(unspent(w2.address).some(o => o.txHash === hash)).toBe(false)
    expect(devnet.ledger.accountedSupply()).toBe(45_000_000_000_000_000n)
  })

  it('runs a Plutus minting policy as a mint purpose', async () => {
    const [funding, collateral] = adaOnly(w1.address)
    const policyId = validator.hash().to_hex()
    const cbor = buildTx({
      inputs: [funding],
      outputs: [{ address: w1.address, coin: 2n * ADA, assets: new Map([[policyId + '01', 1n]]) }],
      mint: [{ policy: validator, name: '\u0001', quantity: 1n }],
      plutusScripts: [validator],
      redeemers: [{ tag: 'mint', index: 0, data: plutusData({ int: 0 }), ...GENEROUS }],
      collateral: [collateral],
      signers: [w1.payment],
    })
    // The validator accepts spending only, so as a minting policy it fails.
    await expectRejected(cbor, /^ValidationTagMismatch: .* ScriptFailure: the mint script of redeemer 0 failed: .*$/)
  })

  it('ValidationTagMismatch when a transaction marked is_valid = false passes its scripts', async () => {
    await expectRejected(spend(locked, { int: 42 }, { isValid: false }), /^ValidationTagMismatch: the transaction is marked is_valid = false but every script succeeds$/)
  })
})

describe('phase one rules for scripts', () => {
  let locked: Output
  beforeAll(() => { locked = lock({ int: 42 }) })

  it('PPViewHashesDontMatch for a wrong or missing script data hash', async () => {
    await expectRejected(spend(locked, { int: 42 }, { scriptDataHash: 'ab'.repeat(32) }), new RegExp(`^PPViewHashesDontMatch: the body declares script data hash ${'ab'.repeat(32)}, the redeemers, datums and cost models give [0-9a-f]{64}$`))
    await expectRejected(spend(locked, { int: 42 }, { scriptDataHash: null }), /^PPViewHashesDontMatch: the body declares script data hash none/)
  })

  it('MissingScriptWitnessesUTXOW, MissingRedeemers and ExtraRedeemers', async () => {
    await expectRejected(spend(locked, { int: 42 }, { plutusScripts: [] }), new RegExp(`^MissingScriptWitnessesUTXOW: no script witness for script hash ${validator.hash().to_hex()}$`))
    await expectRejected(spend(locked, { int: 42 }, { redeemers: [] }), /^MissingRedeemers: no redeemer for spend [01] \(Plutus script [0-9a-f]{56}\)$/)
    const extra = { tag: 'mint' as const, index: 0, data: plutusData({ int: 0 }), mem: 0, steps: 0 }
    const [funding] = adaOnly(w1.address)
    const index = [locked.ref, funding.ref].sort(compareRefs).indexOf(locked.ref)
    await expectRejected(spend(locked, { int: 42 }, { redeemers: [{ tag: 'spend', index, data: plutusData({ int: 42 }), ...GENEROUS }, extra] }), /^ExtraRedeemers: redeemer mint 0 points to no Plutus script execution$/)
  })

  it('ExtraneousScriptWitnessesUTXOW for a Plutus script no input or policy needs', async () => {
    const [funding] = adaOnly(w1.address)
    await expectRejected(buildTx({ inputs: [funding], outputs: [{ address: w2.address, coin: 5n * ADA }], plutusScripts: [validator], signers: [w1.payment] }),
      new RegExp(`^ExtraneousScriptWitnessesUTXOW: the witness set carries script ${validator.hash().to_hex()}, which the transaction does not need$`))
  })

  it('MissingRequiredDatums and NotAllowedSupplementalDatums', async () => {
    const hashed = lock({ int: 9 }, 'hash')
    await expectRejected(spend(hashed, { int: 9 }), new RegExp(`^MissingRequiredDatums: no datum with hash ${hashed.dataHash} in the witness set`))
    await expectRejected(spend(locked, { int: 42 }, { datums: [plutusData({ int: 1234 })] }), /^NotAllowedSupplementalDatums: the witness set carries datum [0-9a-f]{64}/)
  })

  it('collateral: present, key-locked and signed for, ADA only, enough, and the declared total right', async () => {
    const [funding, collateral, third, fourth] = adaOnly(w1.address)
    await expectRejected(spend(locked, { int: 42 }, { collateral: [] }), /^NoCollateralInputs: /)
    await expectRejected(spend(locked, { int: 42 }, { collateral: [collateral, third, fourth, funding] }), /^TooManyCollateralInputs: 4 collateral inputs, the maximum is 3$/)
    const otherLocked = lock({ int: 3 })
    await expectRejected(spend(locked, { int: 42 }, { collateral: [otherLocked] }), new RegExp(`^ScriptsNotPaidUTxO: collateral input ${otherLocked.ref} is not locked by a key$`))
    await expectRejected(spend(locked, { int: 42 }, { collateralReturn: { address: w1.address, coin: collateral.value.coin - 1000n } }), /^InsufficientCollateral: collateral of 1000 lovelace is below the required \d+ \(150% of the fee \d+\)$/)
    await expectRejected(spend(locked, { int: 42 }, { totalCollateral: 1n }), new RegExp(`^IncorrectTotalCollateralField: the body declares total collateral 1, the collateral inputs less the return give ${collateral.value.coin}$`))
    await expectRejected(spend(locked, { int: 42 }, { collateral: [adaOnly(w2.address)[0]] }), new RegExp(`^MissingVKeyWitnessesUTXOW: missing signature of key hash ${w2.payment.to_public().hash().to_hex()}$`))
  })

  it('ExUnitsTooBigUTxO beyond max_tx_ex_units, FeeTooSmallUTxO when the fee leaves out execution units', async () => {
    await expectRejected(spend(locked, { int: 42 }, { exUnits: { mem: 14_000_001, steps: 1000 } }), /^ExUnitsTooBigUTxO: the redeemers declare mem 14000001 and steps 1000; the maximum per transaction is mem 14000000 and steps 10000000000$/)
    const sizeOnly = spend(locked, { int: 42 }, { fee: 200_000n })
    await expectRejected(sizeOnly, /^FeeTooSmallUTxO: fee 200000 is below the minimum \d+ \(\d+ for the size, 93750 for scripts\)$/)
  })
})

describe('POST /utils/txs/evaluate', () => {
  let locked: Output
  beforeAll(() => { locked = lock({ int: 42 }) })

  it('answers the execution units per redeemer in Ogmios v5 form (hex or raw CBOR) and v6 form', async () => {
    const cbor = spend(locked, { int: 42 })
    const v5 = await evaluateHttp(cbor)
    expect(v5).toMatchObject({ status: 200, body: { type: 'jsonwsp/response', version: '1.0', servicename: 'ogmios', methodname: 'EvaluateTx', reflection: null } })
    const entries = Object.entries(v5.body.result.EvaluationResult) as [string, any][]
    expect(entries).toHaveLength(1)
    const [[purpose, units]] = entries
    expect(purpose).toMatch(/^spend:[01]$/)
    expect(units).toEqual({ memory: expect.any(Number), steps: expect.any(Number) })

    const raw = await fetch(`${devnet.url}/utils/txs/evaluate`, { method: 'POST', headers: { 'Content-Type': 'application/cbor' }, body: Buffer.from(cbor) })
    expect((await raw.json() as any).result).toEqual(v5.body.result)

    const v6 = await evaluateHttp(cbor, '?version=6')
    expect(v6.body).toEqual({ jsonrpc: '2.0', method: 'evaluateTransaction', id: null, result: [{ validator: { purpose: 'spend', index: Number(purpose.slice(6)) }, budget: { memory: units.memory, cpu: units.steps } }] })
  })

  it('answers a script failure with the validator error and trace', async () => {
    const { status, body } = await evaluateHttp(spend(locked, { int: 1 }))
    expect(status).toBe(200)
    const [failures] = Object.values(body.result.EvaluationFailure.ScriptFailures) as any[]
    expect(failures).toEqual([{ validatorFailed: { error: expect.any(String), traces: ['redeemer does not match datum'] } }])
  })

  it('resolves inputs from an additional UTxO set, and works through blockfrost-js', async () => {
    const virtual = { ...locked, txHash: 'cd'.repeat(32), index: 0, ref: `${'cd'.repeat(32)}#0` }
    const cbor = spend(virtual, { int: 42 })
    expect((await evaluateHttp(cbor)).body.result.EvaluationFailure.CannotCreateEvaluationContext.reason).toBe(`Unknown transaction input (missing from UTxO set): ${virtual.ref}`)

    const api = new BlockFrostAPI({ customBackend: devnet.url })
    const txOut = { address: scriptAddress, value: { coins: 10_000_000 }, datum: plutusData({ int: 42 }).to_hex() }
    const result: any = await api.utilsTxsEvaluateUtxos(Buffer.from(cbor).toString('hex'), [[{ txId: virtual.txHash, index: 0 }, txOut]] as any)
    expect(Object.values(result.result.EvaluationResult)).toEqual([{ memory: expect.any(Number), steps: expect.any(Number) }])
    const viaClient: any = await api.utilsTxsEvaluate(spend(locked, { int: 42 }))
    expect(viaClient.result.EvaluationResult).toBeDefined()
  })
})
