import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { feeOf, priceOf, type ResourceCost, signBody } from '../../../devnet/chain-b/ledger.ts'
import { NIGHT, type RegularBody } from '../../../devnet/chain-b/types.ts'
import { identityOf } from '../../../srv/chains/chain-b/vault.ts'
import { vaultDeployment } from '../../../srv/chains/chain-b/vault-codec.ts'
import { execute, hash, key, newLedger, rejection, signedCall } from './helpers.ts'

/** The devnet ledger's rules: genesis, submission checks (each rejection), UTXOs, shielded outputs, fees. */

const attest = (payload: string) => ({ circuit: 'attest', args: { payloadHash: hash(payload), metadataHash: hash('meta:' + payload) } })

describe('genesis', () => {
  it('deploys the vault by a Midnight transaction at the address its seed determines, and funds the accounts', async () => {
    const { ledger } = newLedger()
    const genesis = ledger.blockAt(0)!
    const deployment = await vaultDeployment('ledger-test')
    expect(ledger.vaultAddress).toBe(deployment.address)
    expect(ledger.vaultAddress).toMatch(/^[0-9a-f]{64}$/)
    // Another seed, another vault; the same seed, the same one.
    expect((await vaultDeployment('ledger-test, another')).address).not.toBe(deployment.address)
    const [deploy, ...system] = genesis.transactions.filter(tx => tx.body.type !== 'parameters')
    expect(deploy).toMatchObject({ kind: 'RegularTransaction', hash: deployment.hash, identifiers: deployment.identifiers, result: { status: 'SUCCESS' }, fees: { paidFees: '0' } })
    expect(Buffer.from(deployment.transaction.slice(0, 80), 'hex').toString('latin1')).toMatch(/^midnight:transaction\[v\d+\]/)
    expect(system.every(tx => tx.kind === 'SystemTransaction')).toBe(true)
    expect(ledger.actionsOf(ledger.vaultAddress)[0].action).toMatchObject({ kind: 'ContractDeploy', index: 0 })
    for (const account of ledger.accounts) expect(ledger.unspentOutputs(account.id)).toHaveLength(4)
    expect(new Set(ledger.blocks.map(b => b.author)).size).toBeGreaterThanOrEqual(1)
    expect(ledger.producers.map(p => p.publicKey)).toContain(genesis.author)
  })

  it('rotates authors over the three producers and reports epochs', () => {
    const { ledger } = newLedger()
    for (let i = 0; i < 4; i++) ledger.produceBlock(1_700_000_010)
    expect(new Set(ledger.blocks.map(b => b.author)).size).toBe(3)
    expect(ledger.epochAt(1_700_000_125)).toEqual({ epochNo: 2, durationSeconds: 60, elapsedSeconds: 5 })
  })
})

describe('submitting a sponsored call', () => {
  const attester = key('attester')

  it('is accepted once per nonce: the same nonce answers the first submission', () => {
    const { ledger, sponsor } = newLedger()
    const call = signedCall(ledger, attest('a'), attester, sponsor, 'nonce-same-1')
    const first = ledger.submitCall(call)
    expect(first.duplicate).toBe(false)
    expect(ledger.submitCall(call)).toEqual({ ...first, duplicate: true })
    ledger.produceBlock()
    expect(ledger.submitCall(signedCall(ledger, attest('other'), attester, sponsor, 'nonce-same-1'))).toEqual({ ...first, duplicate: true })
    expect(ledger.transactionsByIdentifier(first.identifier)).toHaveLength(1)
  })

  it.each([
    ['unknown contract', (c: any) => ({ ...c, contractAddress: hash('elsewhere') }), 404, 'UNKNOWN_CONTRACT'],
    ['bad nonce', (c: any) => ({ ...c, nonce: 'x' }), 400, 'MALFORMED_CALL'],
    ['no call', (c: any) => ({ ...c, call: undefined }), 400, 'MALFORMED_CALL'],
    ['tampered args', (c: any) => ({ ...c, call: { ...c.call, args: { ...c.call.args, metadataHash: hash('changed') } } }), 400, 'INVALID_SIGNATURE'],
    ['foreign attester key', (c: any) => ({ ...c, attesterKey: key('mallory').publicKey }), 400, 'INVALID_SIGNATURE'],
    ['bad sponsor signature', (c: any) => ({ ...c, sponsorSignature: c.signature }), 400, 'INVALID_SPONSOR_SIGNATURE'],
    ['malformed key', (c: any) => ({ ...c, attesterKey: 'zz' }), 400, 'INVALID_SIGNATURE'],
  ])('%s is rejected', (_, change, status, code) => {
    const { ledger, sponsor } = newLedger()
    expect(rejection(() => ledger.submitCall(change(signedCall(ledger, attest('x'), attester, sponsor))))).toEqual({ status, code })
    expect(ledger.mempool).toHaveLength(0)
  })

  it.each([
    ['unknown circuit', { circuit: 'mint', args: {} }, 'UNKNOWN_CIRCUIT'],
    ['missing argument', { circuit: 'attest', args: { payloadHash: hash('a') } }, 'INVALID_ARGUMENTS'],
    ['extra argument', { circuit: 'attest', args: { payloadHash: hash('a'), metadataHash: hash('b'), more: 1 } }, 'INVALID_ARGUMENTS'],
    ['short hash', { circuit: 'attest', args: { payloadHash: 'abcd', metadataHash: hash('b') } }, 'INVALID_ARGUMENTS'],
    ['uppercase hash', { circuit: 'attest', args: { payloadHash: hash('a').toUpperCase(), metadataHash: hash('b') } }, 'INVALID_ARGUMENTS'],
    ['level 3', { circuit: 'grantDisclosure', args: { payloadHash: hash('a'), grantee: hash('g'), level: 3 } }, 'INVALID_ARGUMENTS'],
    ['level as text', { circuit: 'grantDisclosure', args: { payloadHash: hash('a'), grantee: hash('g'), level: '1' } }, 'INVALID_ARGUMENTS'],
    ['odd hex nonce', { circuit: 'revealAnchor', args: { payloadHash: hash('a'), metadataHash: hash('b'), nonce: 'abc' } }, 'INVALID_ARGUMENTS'],
  ])('a call with %s is rejected', (_, call, code) => {
    const { ledger, sponsor } = newLedger()
    expect(rejection(() => ledger.submitCall(signedCall(ledger, call, attester, sponsor)))).toEqual({ status: 400, code })
  })

  it('is rejected with SPONSOR_EXHAUSTED when the sponsor cannot pay, and accepted once the faucet credits it', () => {
    const { ledger } = newLedger()
    const poor = key('poor sponsor')
    expect(rejection(() => ledger.submitCall(signedCall(ledger, attest('p'), attester, poor)))).toEqual({ status: 402, code: 'SPONSOR_EXHAUSTED' })
    ledger.grantDust(poor.publicKey, 10n ** 15n)
    expect(ledger.availableDust(poor.publicKey)).toBe(10n ** 15n)
    expect(ledger.dustBalance(poor.publicKey)).toBe(0n)
    ledger.submitCall(signedCall(ledger, attest('p'), attester, poor))
    ledger.produceBlock()
    const fee = ledger.tip.transactions.find(tx => tx.kind === 'RegularTransaction')!.fees!.paidFees
    expect(ledger.dustBalance(poor.publicKey)).toBe(10n ** 15n - BigInt(fee))
  })

  it('counts pending fees against the sponsor', () => {
    const { ledger } = newLedger()
    const sponsor = key('tight sponsor')
    const body = signedCall(ledger, attest('t1'), attester, sponsor)
    const fee = feeOf({ type: 'regular', nonce: body.nonce, payer: sponsor.publicKey, call: body }, ledger.parameters)
    ledger.grantDust(sponsor.publicKey, fee + fee / 2n)
    ledger.submitCall(body)
    expect(rejection(() => ledger.submitCall(signedCall(ledger, attest('t2'), attester, sponsor)))).toEqual({ status: 402, code: 'SPONSOR_EXHAUSTED' })
  })

  it('faucet refuses bad keys and amounts', () => {
    const { ledger } = newLedger()
    expect(rejection(() => ledger.grantDust('nope', 1n)).code).toBe('INVALID_PUBLIC_KEY')
    expect(rejection(() => ledger.grantDust(key('k').publicKey, 0n)).code).toBe('INVALID_AMOUNT')
  })
})

describe('unshielded transfers', () => {
  function transfer(overrides: Partial<RegularBody['unshielded']> = {}, from = 0) {
    const { ledger } = newLedger()
    const sender = ledger.accounts[from]
    const [input] = ledger.unspentOutputs(sender.id)
    const unshielded = {
      signer: sender.publicKey,
      inputs: [{ intentHash: input.intentHash, outputIndex: input.outputIndex }],
      outputs: [{ owner: ledger.accounts[1].id, tokenType: NIGHT, value: '400000000' }, { owner: sender.id, tokenType: NIGHT, value: '600000000' }],
      ...overrides,
    }
    return { ledger, sender, input, body: signBody({ type: 'regular', nonce: 'transfer-1', payer: sender.publicKey, unshielded }, sender) }
  }

  it('moves value, conserved, and marks the input spent', () => {
    const { ledger, body, input } = transfer()
    const { hash: txHash } = ledger.submit(body)
    ledger.produceBlock()
    const [tx] = ledger.transactionsByHash(txHash)
    expect(tx.result).toEqual({ status: 'SUCCESS', segments: [{ id: 0, success: true }] })
    expect(tx.spent).toHaveLength(1)
    expect(tx.created.map(u => u.value)).toEqual(['400000000', '600000000'])
    expect(ledger.spentAt(input)).toBe(tx.id)
    expect(ledger.unspentOutputs(ledger.accounts[1].id)).toHaveLength(5)
  })

  it('refuses value created or lost', () => {
    const { ledger, sender } = transfer()
    const [input] = ledger.unspentOutputs(sender.id)
    const body = signBody({ type: 'regular', nonce: 'n-1', payer: sender.publicKey, unshielded: { signer: sender.publicKey, inputs: [input], outputs: [{ owner: sender.id, tokenType: NIGHT, value: '1000000001' }] } }, sender)
    expect(rejection(() => ledger.submit(body))).toEqual({ status: 400, code: 'VALUE_NOT_CONSERVED' })
  })

  it('refuses a double spend, in the mempool and after confirmation', () => {
    const { ledger, body, sender } = transfer()
    ledger.submit(body)
    const again = signBody({ ...body, nonce: 'transfer-2', payerSignature: undefined }, sender)
    expect(rejection(() => ledger.submit(again))).toEqual({ status: 400, code: 'UTXO_SPENT' })
    ledger.produceBlock()
    expect(rejection(() => ledger.submit(again))).toEqual({ status: 400, code: 'UTXO_SPENT' })
  })

  it('refuses unknown outputs, foreign outputs and bad signatures', () => {
    const unknown = transfer({ inputs: [{ intentHash: hash('none'), outputIndex: 0 }] })
    expect(rejection(() => unknown.ledger.submit(unknown.body)).code).toBe('UTXO_UNKNOWN')
    const { ledger } = newLedger()
    const thief = ledger.accounts[1]
    const [foreign] = ledger.unspentOutputs(ledger.accounts[0].id)
    const stolen = signBody({ type: 'regular', nonce: 'theft-01', payer: thief.publicKey, unshielded: { signer: thief.publicKey, inputs: [foreign], outputs: [{ owner: thief.id, tokenType: NIGHT, value: foreign.value }] } }, thief)
    expect(rejection(() => ledger.submit(stolen)).code).toBe('NOT_OWNER')
    const forged = transfer()
    expect(rejection(() => forged.ledger.submit({ ...forged.body, nonce: 'changed-after-signing' })).code).toBe('INVALID_SIGNATURE')
  })
})

describe('shielded transfers', () => {
  it('are visible only as zswap ledger events and tree indices', () => {
    const { ledger } = newLedger()
    const payer = ledger.accounts[2]
    const first = ledger.submit(signBody({ type: 'regular', nonce: 'shielded-1', payer: payer.publicKey, shieldedOutputs: 2 }, payer))
    const second = ledger.submit(signBody({ type: 'regular', nonce: 'shielded-2', payer: payer.publicKey, shieldedOutputs: 3 }, payer))
    ledger.produceBlock()
    const [a] = ledger.transactionsByHash(first.hash)
    const [b] = ledger.transactionsByHash(second.hash)
    expect(a.zswap).toMatchObject({ startIndex: 0, endIndex: 2 })
    expect(a.zswap.events.map(e => e.id)).toEqual([0, 1])
    expect(b.zswap).toMatchObject({ startIndex: 2, endIndex: 5 })
    expect(b.zswap.root).not.toBe(a.zswap.root)
    expect(a.created).toEqual([])
    expect(JSON.stringify(a.body)).not.toMatch(/value|owner/)
  })
})

describe('fees', () => {
  it("are Midnight's: the genesis block sets Midnight's initial parameters, and their price of a real transaction's cost is the ledger's fee", async () => {
    const { ledger } = newLedger()
    // The vault's deployment is a real Midnight transaction: Midnight's ledger computes its cost and fee.
    const deployment = await vaultDeployment('ledger-test')
    const { stdout } = await promisify(execFile)(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(__dirname, 'midnight-fees.ts'), deployment.transaction], { timeout: 60_000 })
    const midnight = JSON.parse(stdout) as { parameters: string; cost: ResourceCost; fee: string }
    expect(ledger.blockAt(0)!.parameters.serialized).toBe(midnight.parameters)
    expect(ledger.parameters).toEqual(ledger.initialParameters)
    const fee = BigInt(midnight.fee)
    expect(fee).toBeGreaterThan(0n)
    expect(midnight.cost.blockUsage).toBeGreaterThan(0)
    // The ledger computes in 64-bit fixed point, the devnet in doubles: equal to a few parts in 10^12.
    expect(Number(priceOf(midnight.cost, ledger.parameters) - fee) / Number(fee)).toBeCloseTo(0, 10)
  }, 60_000)

  it("price a Midnight node's own transactions as the node does, at the node's parameters: every cost dimension, writes included", async () => {
    // Recorded from a Midnight node (test/fixtures/chain-b/recorded-node): transfers carrying real
    // proofs, and the node's ledger state, whose fee prices block fullness has moved off the initial ones.
    const recorded = join(__dirname, '../../fixtures/chain-b/recorded-node')
    for (const transfer of ['transfer-1.raw', 'transfer-2.raw']) {
      const { stdout } = await promisify(execFile)(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(__dirname, 'midnight-fees.ts'), join(recorded, transfer), join(recorded, 'ledger-state.raw')], { timeout: 60_000 })
      const node = JSON.parse(stdout) as { midnightParameters: Parameters<typeof priceOf>[1]; cost: ResourceCost; fee: string }
      expect(node.midnightParameters.feePrices.overallPrice).not.toBe(10)
      expect(node.cost.bytesWritten).toBeGreaterThan(0)
      expect(node.cost.bytesChurned).toBeGreaterThan(0)
      const fee = BigInt(node.fee)
      expect(Number(priceOf(node.cost, node.midnightParameters) - fee) / Number(fee)).toBeCloseTo(0, 10)
    }
  }, 120_000)
  it('price a transaction by its bytes, above the baseline, and charge nothing for system transactions', () => {
    const { ledger, sponsor } = newLedger()
    const attester = key('fee attester')
    const small = signedCall(ledger, attest('s'), attester, sponsor)
    const large = signedCall(ledger, { circuit: 'attest', args: { payloadHash: hash('l'), metadataHash: hash('meta:l'), note: 'x'.repeat(4000) } } as never, attester, sponsor)
    const fee = (call: typeof small) => feeOf({ type: 'regular', nonce: call.nonce, payer: sponsor.publicKey, call }, ledger.parameters)
    const { blockLimits, feePrices } = ledger.parameters
    const bytes = (call: typeof small) => Buffer.byteLength(JSON.stringify({ type: 'regular', nonce: call.nonce, payer: sponsor.publicKey, call }))
    const byBytes = (call: typeof small) => BigInt(Math.ceil(feePrices.overallPrice * feePrices.blockUsageFactor * bytes(call) / blockLimits.blockUsage * 1e15))
    expect(fee(small)).toBe(byBytes(small))
    expect(fee(large)).toBe(byBytes(large))
    expect(fee(large)).toBeGreaterThan(fee(small) * 5n)
    expect(feeOf({ type: 'dust-grant', publicKey: sponsor.publicKey, amount: '1', nonce: 'n' }, ledger.parameters)).toBe(0n)
  })
  it('are paid in DUST by the payer and grow with the size', () => {
    const { ledger, sponsor } = newLedger()
    const before = ledger.dustBalance(sponsor.publicKey)
    const small = execute(ledger, attest('fee-1'), key('attester'), sponsor)
    const big = execute(ledger, { circuit: 'attestAgentOutput', args: { payloadHash: hash('x'), envelope: 'ab'.repeat(500) } }, key('attester'), sponsor)
    expect(BigInt(big.fees!.paidFees)).toBeGreaterThan(BigInt(small.fees!.paidFees))
    expect(BigInt(small.fees!.estimatedFees)).toBeGreaterThanOrEqual(BigInt(small.fees!.paidFees))
    expect(ledger.dustBalance(sponsor.publicKey)).toBe(before - BigInt(small.fees!.paidFees) - BigInt(big.fees!.paidFees))
    expect(identityOf(sponsor.publicKey)).toBe(sponsor.id)
  })
})
