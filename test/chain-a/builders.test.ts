import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { builderFor, type BuilderName, type BuildRequest, type BuildResult, type ScriptSpendRequest } from '../../srv/chains/chain-a/builders/index.ts'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { signTransaction } from '../../devnet/chain-a/wallet.ts'
import { slotConfigFor } from '../../srv/chains/chain-a/plutus.ts'
import type { ChainUtxo } from '../../srv/chains/chain-a/port.ts'
import { getJson, startDevnet } from '../support/devnet.ts'
import { upstreamConfig } from './support/test-server.ts'
import validator from '../fixtures/plutus/redeemer-equals-datum.plutus.json'

/**
 * Both builders, every kind of transaction: built from the devnet's UTxOs as a service reads them
 * (through the Blockfrost adapter), signed with the wallet keys, and accepted by the devnet's ledger.
 */

let devnet: ChainADevnet
let adapter: BlockfrostAdapter
const ADA = 1_000_000n

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'builders-test', wallets: 4 })
  adapter = new BlockfrostAdapter(upstreamConfig({ url: devnet.url }))
  devnet.produceBlock()
})
afterAll(() => devnet.stop())

const scriptHash = CSL.PlutusScript.from_bytes_v3(Buffer.from(validator.cborHex, 'hex')).hash()
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(scriptHash)).to_address().to_bech32()

/** What a service knows when a wallet asks for a build. */
async function context(wallet: WalletKeyPair): Promise<BuildRequest> {
  const [utxos, protocolParameters, genesis, tip] = await Promise.all([adapter.addressUtxos(wallet.address), adapter.protocolParameters(), adapter.genesis(), adapter.tip()])
  return { utxos, changeAddress: wallet.address, protocolParameters: protocolParameters!, currentSlot: tip.slot, networkId: 0, slotConfig: slotConfigFor('devnet', genesis) }
}

async function submitAndInclude(result: BuildResult, keys: CSL.PrivateKey[]): Promise<string> {
  const hash = await adapter.submit(signTransaction(Buffer.from(result.unsignedTxCbor, 'hex'), keys))
  expect(hash).toBe(result.txBodyHash)
  expect(devnet.produceBlock().txs).toContain(hash)
  return hash
}

const keyHash = (wallet: WalletKeyPair) => wallet.payment.to_public().hash().to_hex()
const sigPolicy = (wallet: WalletKeyPair) => ({ type: 'sig', keyHash: keyHash(wallet) })
const policyId = (json: unknown) => nativeScript(json).hash().to_hex()
const hex = (text: string) => Buffer.from(text).toString('hex')

/** The cardano-cli JSON as a CSL script, to know the policy id a test mints under. */
function nativeScript(json: any): CSL.NativeScript {
  const list = (scripts: any[]) => { const l = CSL.NativeScripts.new(); scripts.forEach(s => l.add(nativeScript(s))); return l }
  switch (json.type) {
    case 'sig': return CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(CSL.Ed25519KeyHash.from_hex(json.keyHash)))
    case 'all': return CSL.NativeScript.new_script_all(CSL.ScriptAll.new(list(json.scripts)))
    case 'any': return CSL.NativeScript.new_script_any(CSL.ScriptAny.new(list(json.scripts)))
    case 'atLeast': return CSL.NativeScript.new_script_n_of_k(CSL.ScriptNOfK.new(json.required, list(json.scripts)))
    case 'after': return CSL.NativeScript.new_timelock_start(CSL.TimelockStart.new_timelockstart(CSL.BigNum.from_str(String(json.slot))))
    default: return CSL.NativeScript.new_timelock_expiry(CSL.TimelockExpiry.new_timelockexpiry(CSL.BigNum.from_str(String(json.slot))))
  }
}

async function expectApiError(promise: Promise<unknown>, code: string, message: RegExp) {
  await expect(promise).rejects.toMatchObject({ status: 400, code, message: expect.stringMatching(message) })
}

describe.each<[BuilderName, string, string]>([['csl', 'wallet-1', 'wallet-3'], ['buildooor', 'wallet-2', 'wallet-4']])('the %s builder', (name, senderName, recipientName) => {
  const builder = builderFor(name)
  let sender: WalletKeyPair
  let recipient: WalletKeyPair
  beforeAll(() => {
    sender = devnet.walletKeys(senderName)
    recipient = devnet.walletKeys(recipientName)
  })

  it('builds a simple ADA transfer', async () => {
    const request = await context(sender)
    const result = await builder.build({ ...request, outputs: [{ address: recipient.address, lovelace: String(25n * ADA) }] })
    expect(result).toMatchObject({
      builder: name,
      outputs: [
        { outputIndex: 0, address: recipient.address, lovelace: String(25n * ADA), assets: [], isChange: false },
        { outputIndex: 1, address: sender.address, isChange: true },
      ],
      validity: { invalidBefore: request.currentSlot, invalidHereafter: request.currentSlot + 7200 },
      mint: [], metadata: [], collateral: [], redeemers: [],
    })
    const largest = [...request.utxos].sort((a, b) => Number(BigInt(b.lovelace) - BigInt(a.lovelace)))[0]
    expect(result.inputs).toEqual([expect.objectContaining({ txHash: largest.txHash, outputIndex: largest.outputIndex, isScript: false })])
    const fee = BigInt(result.fee)
    expect(fee).toBeGreaterThan(155_381n)
    expect(fee).toBeLessThan(200_000n)
    expect(BigInt(largest.lovelace)).toBe(25n * ADA + BigInt(result.outputs[1].lovelace) + fee)
    expect(result.size).toBe(result.unsignedTxCbor.length / 2)

    const hash = await submitAndInclude(result, [sender.payment])
    expect((await adapter.transaction(hash))).toMatchObject({ fee: result.fee, validContract: true })
  })

  it('mints under a signature policy with CIP-25 metadata, sends the tokens on, and burns them', async () => {
    const policy = sigPolicy(sender)
    const unit = policyId(policy) + hex('Token')
    const cip25 = { [policyId(policy)]: { Token: { name: `${name} token`, image: 'ipfs://QmToken' } }, version: '1.0' }
    const mint = await builder.build({
      ...await context(sender),
      mint: [{ policy: JSON.stringify(policy), assets: [{ assetName: hex('Token'), quantity: '100' }] }],
      outputs: [{ address: sender.address, assets: [{ unit, quantity: '100' }] }],
      metadataJson: JSON.stringify({ 721: cip25 }),
    })
    expect(mint.mint).toEqual([{ unit, quantity: '100' }])
    expect(mint.mintPolicyIds).toEqual([policyId(policy)])
    expect(JSON.parse(mint.metadata[0].json)).toEqual(cip25)
    await submitAndInclude(mint, [sender.payment])
    expect((await getJson(devnet, `/assets/${unit}`)).body).toMatchObject({ quantity: '100', onchain_metadata: { name: `${name} token` }, onchain_metadata_standard: 'CIP25v1' })

    const transfer = await builder.build({ ...await context(sender), outputs: [{ address: recipient.address, assets: [{ unit, quantity: '30' }] }] })
    expect(transfer.outputs[0]).toMatchObject({ address: recipient.address, assets: [{ unit, quantity: '30' }] })
    expect(transfer.outputs[1]).toMatchObject({ isChange: true, assets: [{ unit, quantity: '70' }] })
    expect(BigInt(transfer.outputs[0].lovelace)).toBeGreaterThan(1_000_000n)
    await submitAndInclude(transfer, [sender.payment])
    expect((await adapter.addressUtxos(recipient.address)).some(u => u.assets.some(a => a.unit === unit && a.quantity === '30'))).toBe(true)

    const burn = await builder.build({ ...await context(sender), mint: [{ policy: nativeScript(policy).to_hex(), assets: [{ assetName: hex('Token'), quantity: '-70' }] }] })
    expect(burn.mint).toEqual([{ unit, quantity: '-70' }])
    expect(burn.inputs.some(input => input.assets.some(a => a.unit === unit))).toBe(true)
    await submitAndInclude(burn, [sender.payment])
    expect((await getJson(devnet, `/assets/${unit}`)).body.quantity).toBe('30')
  })

  it('mints under time-locked policies combined with all, any and atLeast', async () => {
    const tip = devnet.ledger.tip.slot
    const policies = [
      { type: 'all', scripts: [sigPolicy(sender), { type: 'before', slot: tip + 500 }] },
      { type: 'all', scripts: [sigPolicy(sender), { type: 'after', slot: tip - 2 }] },
      { type: 'any', scripts: [sigPolicy(sender), sigPolicy(recipient)] },
      { type: 'atLeast', required: 2, scripts: [sigPolicy(sender), { type: 'after', slot: 1 }, sigPolicy(recipient)] },
    ]
    const result = await builder.build({
      ...await context(sender),
      mint: policies.map((policy, i) => ({ policy: JSON.stringify(policy), assets: [{ assetName: hex(`Locked${i}`), quantity: '1' }] })),
      outputs: [{ address: recipient.address, assets: policies.map((policy, i) => ({ unit: policyId(policy) + hex(`Locked${i}`), quantity: '1' })) }],
    })
    expect(result.validity.invalidHereafter).toBe(tip + 500)
    expect(result.validity.invalidBefore).toBeGreaterThanOrEqual(tip - 2)
    expect(result.mint).toHaveLength(4)
    await submitAndInclude(result, [sender.payment])
  })

  it('builds a metadata transaction: a CIP-20 message and an arbitrary label', async () => {
    const metadata = { 674: { msg: [`hello from ${name}`, 'second line'] }, 1337: { list: [1, 2, 'three'], bytes: '0xcafe' } }
    const result = await builder.build({ ...await context(sender), outputs: [{ address: recipient.address, lovelace: '2000000' }], metadataJson: JSON.stringify(metadata) })
    expect(result.metadata.map(m => [m.label, JSON.parse(m.json)])).toEqual([['674', metadata[674]], ['1337', metadata[1337]]])
    const hash = await submitAndInclude(result, [sender.payment])
    expect((await getJson(devnet, `/txs/${hash}/metadata`)).body).toEqual([
      { label: '674', json_metadata: metadata[674] },
      { label: '1337', json_metadata: metadata[1337] },
    ])
  })

  it('adds required signers, and the fee already pays for their signatures', async () => {
    const result = await builder.build({ ...await context(sender), requiredSigners: [keyHash(recipient)], outputs: [{ address: recipient.address, lovelace: '3000000' }] })
    expect(result.requiredSigners).toEqual([keyHash(recipient)])
    const unsigned = Buffer.from(result.unsignedTxCbor, 'hex')
    await expect(adapter.submit(signTransaction(unsigned, [sender.payment]))).rejects.toMatchObject({ code: 'TX_REJECTED', message: expect.stringMatching(`MissingVKeyWitnessesUTXOW: missing signature of key hash ${keyHash(recipient)}`) })
    await submitAndInclude(result, [sender.payment, recipient.payment])
  })

  describe('Plutus V3', () => {
    async function lock(datum: unknown, inline: boolean): Promise<ChainUtxo> {
      const result = await builder.build({ ...await context(sender), outputs: [{ address: scriptAddress, lovelace: String(10n * ADA), datumJson: JSON.stringify(datum), datumInline: inline }] })
      expect(result.outputs[0]).toMatchObject(inline ? { inlineDatum: expect.any(String), datumHash: null } : { datumHash: expect.any(String), inlineDatum: null })
      const hash = await submitAndInclude(result, [sender.payment])
      return (await adapter.addressUtxos(scriptAddress)).find(u => u.txHash === hash)!
    }

    const spendRequest = async (utxo: ChainUtxo, redeemer: unknown, extra: Partial<ScriptSpendRequest> = {}): Promise<BuildRequest> => ({
      ...await context(sender),
      outputs: [{ address: recipient.address, lovelace: String(5n * ADA) }],
      scriptInputs: [{ utxo, validator: validator.cborHex, redeemerJson: JSON.stringify(redeemer), ...extra }],
    })

    it('spends an output locked with an inline datum, with evaluated execution units and collateral', async () => {
      const locked = await lock({ int: 42 }, true)
      const request = await spendRequest(locked, { int: 42 })
      const result = await builder.build(request)
      const index = result.inputs.findIndex(input => input.isScript)
      expect(result.inputs[index]).toMatchObject({ txHash: locked.txHash, outputIndex: locked.outputIndex, address: scriptAddress })
      expect(result.redeemers).toEqual([{ tag: 'spend', index, mem: expect.any(Number), steps: expect.any(Number) }])
      expect(result.scriptHashes).toEqual([scriptHash.to_hex()])

      const evaluated = (await (await fetch(`${devnet.url}/utils/txs/evaluate`, { method: 'POST', headers: { 'Content-Type': 'application/cbor' }, body: result.unsignedTxCbor })).json() as any)
      const needed = evaluated.result.EvaluationResult[`spend:${index}`]
      const [{ mem, steps }] = result.redeemers
      expect(mem).toBeGreaterThanOrEqual(needed.memory)
      expect(steps).toBeGreaterThanOrEqual(needed.steps)
      expect(mem).toBeLessThanOrEqual(Math.ceil(needed.memory * 1.1) + 1000)
      expect(steps).toBeLessThanOrEqual(Math.ceil(needed.steps * 1.1) + 50_000)

      expect(result.collateral).toHaveLength(1)
      expect(result.collateral[0].assets).toEqual([])
      const total = BigInt(result.totalCollateral!)
      expect(total * 100n).toBeGreaterThanOrEqual(BigInt(result.fee) * 150n)
      expect(BigInt(result.collateral[0].lovelace)).toBe(total + BigInt(result.collateralReturn!.lovelace))

      const hash = await submitAndInclude(result, [sender.payment])
      expect(await adapter.transaction(hash)).toMatchObject({ validContract: true, redeemerCount: 1 })
      expect((await adapter.addressUtxos(scriptAddress)).some(u => u.txHash === locked.txHash && u.outputIndex === locked.outputIndex)).toBe(false)
    })

    it('spends an output locked with a datum hash, given the datum', async () => {
      const datum = { constructor: 1, fields: [{ bytes: 'beef' }, { list: [{ int: 7 }] }] }
      const locked = await lock(datum, false)
      await expectApiError(builder.build(await spendRequest(locked, datum)), 'INVALID_PLUTUS_DATA', /carries only the hash of its datum/)
      await expectApiError(builder.build(await spendRequest(locked, datum, { datumJson: '{"int":8}' })), 'INVALID_PLUTUS_DATA', /hashes to [0-9a-f]{64}, but .* declares datum hash/)
      const result = await builder.build(await spendRequest(locked, datum, { datumJson: JSON.stringify(datum) }))
      await submitAndInclude(result, [sender.payment])
    })

    it('answers SCRIPT_FAILED with the validator\'s trace for a wrong redeemer, and accepts the validator wrapped once', async () => {
      const locked = await lock({ int: 7 }, true)
      await expectApiError(builder.build(await spendRequest(locked, { int: 8 })), 'SCRIPT_FAILED',
        new RegExp(`^The validator of ${locked.txHash}#${locked.outputIndex} failed: .*\\(trace: redeemer does not match datum\\)$`))
      const once = CSL.PlutusScript.from_bytes_v3(Buffer.from(validator.cborHex, 'hex')).bytes()
      const result = await builder.build(await spendRequest(locked, { int: 7 }, { validator: Buffer.from(once).toString('hex') }))
      await submitAndInclude(result, [sender.payment])
    })
  })

  describe('errors', () => {
    it('INSUFFICIENT_FUNDS names the shortfall in lovelace and per asset', async () => {
      const request = await context(sender)
      const total = request.utxos.reduce((sum, u) => sum + BigInt(u.lovelace), 0n)
      const missingUnit = 'ab'.repeat(28) + hex('Nothing')
      await expectApiError(builder.build({ ...request, outputs: [{ address: recipient.address, lovelace: String(total), assets: [{ unit: missingUnit, quantity: '5' }] }] }),
        'INSUFFICIENT_FUNDS', new RegExp(`^Insufficient funds: short by \\d+ lovelace and 5 of ${missingUnit}\\. .* hold ${total} lovelace$`))
    })

    it('OUTPUT_BELOW_MIN_ADA says the minimum', async () => {
      await expectApiError(builder.build({ ...await context(sender), outputs: [{ address: recipient.address, lovelace: '500000' }] }),
        'OUTPUT_BELOW_MIN_ADA', /^Output 0 to addr_test1\S+ holds 500000 lovelace; with its assets and datum it needs at least 9\d{5} lovelace$/)
    })

    it('never selects excluded UTxOs', async () => {
      const request = await context(sender)
      const bySize = [...request.utxos].sort((a, b) => Number(BigInt(b.lovelace) - BigInt(a.lovelace)))
      const excluded = bySize.slice(0, 2).map(u => ({ txHash: u.txHash, outputIndex: u.outputIndex }))
      const result = await builder.build({ ...request, excludedUtxos: excluded, outputs: [{ address: recipient.address, lovelace: String(3n * ADA) }] })
      const refs = result.inputs.map(i => `${i.txHash}#${i.outputIndex}`)
      for (const ref of excluded) expect(refs).not.toContain(`${ref.txHash}#${ref.outputIndex}`)
      expect(refs).toEqual([`${bySize[2].txHash}#${bySize[2].outputIndex}`])
      const all = request.utxos.map(u => ({ txHash: u.txHash, outputIndex: u.outputIndex }))
      await expectApiError(builder.build({ ...request, excludedUtxos: all, outputs: [{ address: recipient.address, lovelace: String(3n * ADA) }] }),
        'INSUFFICIENT_FUNDS', new RegExp(`the sender's 0 spendable UTxOs hold 0 lovelace; ${request.utxos.length} more are excluded as reserved by pending builds$`))
    })

    it('refuses malformed metadata, native scripts, Plutus data and scripts', async () => {
      const request = { ...await context(sender), outputs: [{ address: recipient.address, lovelace: '2000000' }] }
      await expectApiError(builder.build({ ...request, metadataJson: '{"674":{"msg":"not a list"}}' }), 'INVALID_METADATA', /CIP-20/)
      await expectApiError(builder.build({ ...request, metadataJson: JSON.stringify({ 1: 'x'.repeat(65) }) }), 'INVALID_METADATA', /label 1 is not valid metadata/)
      await expectApiError(builder.build({ ...request, metadataJson: '{"label":1}' }), 'INVALID_METADATA', /not a metadata label/)
      await expectApiError(builder.build({ ...request, mint: [{ policy: '{"type":"sig","keyHash":"zz"}', assets: [{ assetName: '', quantity: '1' }] }] }), 'INVALID_NATIVE_SCRIPT', /keyHash/)
      await expectApiError(builder.build({ ...request, mint: [{ policy: '{"type":"before"}', assets: [{ assetName: '', quantity: '1' }] }] }), 'INVALID_NATIVE_SCRIPT', /slot/)
      await expectApiError(builder.build({ ...request, outputs: [{ address: scriptAddress, datumJson: '{"int":"x"}' }] }), 'INVALID_PLUTUS_DATA', /detailed JSON schema/)
      const locked = (await adapter.addressUtxos(scriptAddress))[0] ?? { ...request.utxos[0], address: scriptAddress }
      await expectApiError(builder.build({ ...request, scriptInputs: [{ utxo: locked, validator: 'deadbeef', redeemerJson: '{"int":1}' }] }), 'INVALID_SCRIPT', /CBOR hex of a Plutus script/)
      await expectApiError(builder.build({ ...request, scriptInputs: [{ utxo: locked, validator: '4e4d01000033222220051200120011', redeemerJson: '{"int":1}' }] }), 'INVALID_SCRIPT', /not a Plutus V3 script/)
    })

    it('NO_COLLATERAL when the sender has no ADA-only UTxO', async () => {
      const locked = await (async () => {
        const request = await context(sender)
        const result = await builder.build({ ...request, outputs: [{ address: scriptAddress, lovelace: String(10n * ADA), datumJson: '{"int":1}' }] })
        const hash = await submitAndInclude(result, [sender.payment])
        return (await adapter.addressUtxos(scriptAddress)).find(u => u.txHash === hash)!
      })()
      const request = await context(sender)
      await expectApiError(builder.build({ ...request, utxos: [], scriptInputs: [{ utxo: locked, validator: validator.cborHex, redeemerJson: '{"int":1}' }] }), 'NO_COLLATERAL', /needs \d+ lovelace of collateral/)
    })
  })
})

it('UNKNOWN_BUILDER for a name that is not a builder', () => {
  expect(() => builderFor('lucid')).toThrow(expect.objectContaining({ status: 400, code: 'UNKNOWN_BUILDER', message: "Unknown transaction builder 'lucid'; available: csl, buildooor" }))
})

describe('both builders on the same request', () => {
  it('deterministically select the same inputs and build the same body, and both transactions are accepted', async () => {
    // A second devnet from the same seed holds the same UTxOs, so each builder's transaction can land on its own chain.
    const twin = await startDevnet({ seed: 'builders-test', wallets: 4 })
    try {
      const wallet = twin.walletKeys('wallet-3')
      const twinAdapter = new BlockfrostAdapter(upstreamConfig({ url: twin.url }))
      const [utxos, protocolParameters, genesis, tip] = await Promise.all([twinAdapter.addressUtxos(wallet.address), twinAdapter.protocolParameters(), twinAdapter.genesis(), twinAdapter.tip()])
      const policy = { type: 'sig', keyHash: wallet.payment.to_public().hash().to_hex() }
      const request: BuildRequest = {
        utxos, changeAddress: wallet.address, protocolParameters: protocolParameters!, currentSlot: tip.slot, networkId: 0, slotConfig: slotConfigFor('devnet', genesis),
        outputs: [{ address: devnet.walletKeys('wallet-1').address, lovelace: String(7n * ADA), assets: [{ unit: policyId(policy) + hex('Twin'), quantity: '2' }] }],
        mint: [{ policy: JSON.stringify(policy), assets: [{ assetName: hex('Twin'), quantity: '2' }] }],
        metadataJson: JSON.stringify({ 674: { msg: ['same request'] } }),
      }
      const [csl, buildooor] = await Promise.all([builderFor('csl').build(request), builderFor('buildooor').build(request)])
      expect(await builderFor('csl').build(request)).toEqual(csl)
      expect(await builderFor('buildooor').build(request)).toEqual(buildooor)
      const shape = ({ fee, unsignedTxCbor, txBodyHash, size, builder, outputs, ...rest }: BuildResult) => ({ ...rest, outputs: outputs.map(({ lovelace, ...o }) => (o.isChange ? o : { lovelace, ...o })) })
      expect(shape(buildooor)).toEqual(shape(csl))
      expect(Math.abs(Number(BigInt(csl.fee) - BigInt(buildooor.fee)))).toBeLessThan(2000)

      const sign = (result: BuildResult) => signTransaction(Buffer.from(result.unsignedTxCbor, 'hex'), [wallet.payment])
      expect(devnet.submit(sign(csl))).toBe(csl.txBodyHash)
      expect(twin.submit(sign(buildooor))).toBe(buildooor.txBodyHash)
      expect(devnet.produceBlock().txs).toContain(csl.txBodyHash)
      expect(twin.produceBlock().txs).toContain(buildooor.txBodyHash)
    } finally {
      await twin.stop()
    }
  })
})

describe('CBOR nested beyond what CSL parses safely never reaches it', () => {
  const deepList = (depth: number) => '81'.repeat(depth) + '00'

  it.each<BuilderName>(['csl', 'buildooor'])('%s: a UTxO with a deeply nested inline datum is never selected, and later builds still work', async name => {
    const sender = devnet.walletKeys('wallet-1')
    const request = await context(sender)
    const [richest] = [...request.utxos].sort((a, b) => Number(BigInt(b.lovelace) - BigInt(a.lovelace)))
    const poisoned: ChainUtxo = { ...richest, txHash: 'ee'.repeat(32), outputIndex: 0, lovelace: String(BigInt(richest.lovelace) * 2n), inlineDatum: deepList(6000) }
    const result = await builderFor(name).build({ ...request, utxos: [poisoned, ...request.utxos], outputs: [{ address: devnet.walletKeys('wallet-2').address, lovelace: String(2n * ADA) }] })
    expect(result.inputs.map(input => input.txHash)).not.toContain(poisoned.txHash)
    expect(CSL.BigNum.from_str('1').to_str()).toBe('1')
  })

  it('a minting policy in CBOR nested too deeply is INVALID_NATIVE_SCRIPT, and CSL keeps working', async () => {
    const sender = devnet.walletKeys('wallet-1')
    const request = await context(sender)
    const policy = '8201' + deepList(6000)
    await expectApiError(builderFor('csl').build({ ...request, mint: [{ policy, assets: [{ assetName: hex('Deep'), quantity: '1' }] }] }), 'INVALID_NATIVE_SCRIPT', /nested too deeply/)
    expect(CSL.BigNum.from_str('2').to_str()).toBe('2')
  })
})
