import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { signBody } from '../../../devnet/chain-b/ledger.ts'
import { openChain, readGenesis, resetState } from '../../../devnet/chain-b/state.ts'
import { anchorCommitment, sha256Hex } from '../../../srv/chains/chain-b/vault.ts'
import { execute, hash, key, newLedger, signedCall } from './helpers.ts'

/** The attestation vault's circuits as the devnet executes them (each rule), reorgs and the saved chain. */

const alice = key('alice')
const bob = key('bob')
const attest = (payload: string) => ({ circuit: 'attest', args: { payloadHash: hash(payload), metadataHash: hash('meta:' + payload) } })

describe('vault circuits', () => {
  it("attest records the attester's anchor once; another attester's anchor of the same hash is its own", () => {
    const { ledger, sponsor } = newLedger()
    const first = execute(ledger, attest('doc'), alice, sponsor)
    expect(first.result!.status).toBe('SUCCESS')
    expect(ledger.vaultState.documents[hash('doc')][alice.id]).toEqual({ metadataHash: hash('meta:doc'), attester: alice.id, height: first.height, txHash: first.hash })
    const before = ledger.dustBalance(sponsor.publicKey)
    const again = execute(ledger, attest('doc'), alice, sponsor)
    expect(again.result).toEqual({ status: 'FAILURE', segments: [{ id: 1, success: false }] })
    expect(again.failure!.code).toBe('ALREADY_ANCHORED')
    expect(again.actions).toEqual([])
    expect(ledger.dustBalance(sponsor.publicKey)).toBe(before - BigInt(again.fees!.paidFees))
    // nobody squats a hash: bob's anchor of the same hash is his, and alice's stays hers
    const other = execute(ledger, attest('doc'), bob, sponsor)
    expect(other.result!.status).toBe('SUCCESS')
    expect(Object.keys(ledger.vaultState.documents[hash('doc')]).sort()).toEqual([alice.id, bob.id].sort())
    expect(ledger.vaultState.documents[hash('doc')][alice.id].txHash).toBe(first.hash)
  })

  it('commitAnchor then revealAnchor by the same attester records the document; another attester cannot reveal, and commitments are scoped too', () => {
    const { ledger, sponsor } = newLedger()
    const payloadHash = hash('secret doc')
    const metadataHash = hash('secret meta')
    const nonce = 'aa'.repeat(16)
    const commitment = anchorCommitment(payloadHash, metadataHash, nonce)
    expect(execute(ledger, { circuit: 'commitAnchor', args: { commitment } }, alice, sponsor).result!.status).toBe('SUCCESS')
    expect(ledger.vaultState.commitments[commitment][alice.id]).toBeDefined()
    expect(ledger.vaultState.documents[payloadHash]).toBeUndefined()
    expect(execute(ledger, { circuit: 'commitAnchor', args: { commitment } }, alice, sponsor).failure!.code).toBe('ALREADY_COMMITTED')
    const reveal = { circuit: 'revealAnchor', args: { payloadHash, metadataHash, nonce } }
    expect(execute(ledger, reveal, bob, sponsor).failure!.code).toBe('UNKNOWN_COMMITMENT')
    expect(execute(ledger, { ...reveal, args: { ...reveal.args, nonce: 'bb'.repeat(16) } }, alice, sponsor).failure!.code).toBe('UNKNOWN_COMMITMENT')
    expect(execute(ledger, reveal, alice, sponsor).result!.status).toBe('SUCCESS')
    expect(ledger.vaultState.documents[payloadHash][alice.id]).toMatchObject({ attester: alice.id, metadataHash })
    // a copied commitment is bob's own record and takes nothing from alice
    expect(execute(ledger, { circuit: 'commitAnchor', args: { commitment } }, bob, sponsor).result!.status).toBe('SUCCESS')
  })

  it('attestAgentOutput keeps the envelope whose SHA-256 is the payload hash', () => {
    const { ledger, sponsor } = newLedger()
    const envelope = JSON.stringify({ agentId: 'agent-1', inputHash: hash('in'), outputHash: hash('out') })
    const hex = Buffer.from(envelope).toString('hex')
    expect(execute(ledger, { circuit: 'attestAgentOutput', args: { payloadHash: hash('other'), envelope: hex } }, alice, sponsor).failure!.code).toBe('PAYLOAD_MISMATCH')
    expect(execute(ledger, { circuit: 'attestAgentOutput', args: { payloadHash: sha256Hex(envelope), envelope: hex } }, alice, sponsor).result!.status).toBe('SUCCESS')
    expect(ledger.vaultState.documents[sha256Hex(envelope)][alice.id].envelope).toBe(envelope)
  })

  it("anchorContentRoot: on the attester's own anchor, once, vouched by the call's sponsor", () => {
    const { ledger, sponsor } = newLedger()
    execute(ledger, attest('rooted'), alice, sponsor)
    const root = '0' + hash('root').slice(1)
    const call = { circuit: 'anchorContentRoot', args: { payloadHash: hash('rooted'), contentRoot: root, schemaId: hash('schema'), fieldCount: 3 } }
    expect(execute(ledger, call, bob, sponsor).failure!.code).toBe('UNKNOWN_DOCUMENT')
    expect(execute(ledger, { ...call, args: { ...call.args, payloadHash: hash('absent') } }, alice, sponsor).failure!.code).toBe('UNKNOWN_DOCUMENT')
    expect(execute(ledger, call, alice, sponsor).result!.status).toBe('SUCCESS')
    expect(execute(ledger, call, alice, sponsor).failure!.code).toBe('ALREADY_ANCHORED')
    expect(ledger.vaultState.documents[hash('rooted')][alice.id]).toMatchObject({ contentRoot: root, schemaId: hash('schema'), fieldCount: 3, rootVouchedBy: sponsor.id })
    expect(() => execute(ledger, { ...call, args: { ...call.args, contentRoot: 'f'.repeat(64) } }, alice, sponsor)).toThrow(/BN254/)
    expect(() => execute(ledger, { ...call, args: { ...call.args, fieldCount: 17 } }, alice, sponsor)).toThrow(/1 to 16/)
    const { fieldCount: _count, ...withoutCount } = call.args
    expect(() => execute(ledger, { ...call, args: withoutCount }, alice, sponsor)).toThrow(/needs the argument 'fieldCount'/)
  })

  it("grantDisclosure and revokeDisclosure: on the attester's own anchor, levels 0..2, revoking an absent grant fails", () => {
    const { ledger, sponsor } = newLedger()
    execute(ledger, attest('disclosed'), alice, sponsor)
    const payloadHash = hash('disclosed')
    const grantee = hash('auditor')
    expect(execute(ledger, { circuit: 'grantDisclosure', args: { payloadHash, grantee, level: 2 } }, bob, sponsor).failure!.code).toBe('UNKNOWN_DOCUMENT')
    expect(execute(ledger, { circuit: 'grantDisclosure', args: { payloadHash, grantee, level: 2 } }, alice, sponsor).result!.status).toBe('SUCCESS')
    expect(ledger.vaultState.documents[payloadHash][alice.id].disclosures).toEqual({ [grantee]: 2 })
    expect(execute(ledger, { circuit: 'revokeDisclosure', args: { payloadHash, grantee } }, bob, sponsor).failure!.code).toBe('UNKNOWN_DOCUMENT')
    expect(execute(ledger, { circuit: 'revokeDisclosure', args: { payloadHash, grantee } }, alice, sponsor).result!.status).toBe('SUCCESS')
    expect(ledger.vaultState.documents[payloadHash][alice.id].disclosures).toEqual({})
    expect(execute(ledger, { circuit: 'revokeDisclosure', args: { payloadHash, grantee } }, alice, sponsor).failure!.code).toBe('UNKNOWN_GRANT')
  })

  it('a transfer with a failing call is a PARTIAL_SUCCESS: the transfer stands', () => {
    const { ledger } = newLedger()
    const payer = ledger.accounts[0]
    const [input] = ledger.unspentOutputs(payer.id)
    const call = signedCall(ledger, { circuit: 'revokeDisclosure', args: { payloadHash: hash('none'), grantee: hash('nobody') } }, alice, payer)
    const body = signBody({ type: 'regular', nonce: 'partial-1', payer: payer.publicKey, call, unshielded: { signer: payer.publicKey, inputs: [input], outputs: [{ owner: bob.id, tokenType: input.tokenType, value: input.value }] } }, payer)
    const { hash: txHash } = ledger.submit(body)
    ledger.produceBlock()
    const [tx] = ledger.transactionsByHash(txHash)
    expect(tx.result).toEqual({ status: 'PARTIAL_SUCCESS', segments: [{ id: 0, success: true }, { id: 1, success: false }] })
    expect(ledger.unspentOutputs(bob.id)).toHaveLength(1)
  })

  it('keeps the state after each action (ContractDeploy, then each call)', () => {
    const { ledger, sponsor } = newLedger()
    for (let i = 0; i < 70; i++) ledger.submitCall(signedCall(ledger, attest('many-' + i), alice, sponsor))
    ledger.produceBlock()
    const actions = ledger.actionsOf(ledger.vaultAddress)
    expect(actions).toHaveLength(71)
    expect(Object.keys(ledger.vaultStateAt(0).documents)).toHaveLength(0)
    expect(Object.keys(ledger.vaultStateAt(1).documents)).toEqual([hash('many-0')])
    expect(Object.keys(ledger.vaultStateAt(66).documents)).toHaveLength(66)
    expect(Object.keys(ledger.vaultStateAt(70).documents)).toHaveLength(70)
  })
})

describe('reorgs', () => {
  it('replaces the blocks above a height with other hashes; their transactions come back into the new blocks', () => {
    const { ledger, sponsor } = newLedger()
    const submitted = ledger.submitCall(signedCall(ledger, attest('reorged'), alice, sponsor))
    ledger.produceBlock()
    ledger.produceBlock()
    const old = ledger.blocks.map(b => b.hash)
    const height = ledger.transactionsByHash(submitted.hash)[0].height
    const { removed, tip } = ledger.reorg(height - 1)
    expect(removed).toBe(2)
    expect(tip.height).toBe(old.length - 1)
    expect(ledger.blocks.slice(0, height).map(b => b.hash)).toEqual(old.slice(0, height))
    for (let h = height; h <= tip.height; h++) expect(ledger.blockAt(h)!.hash).not.toBe(old[h])
    expect(ledger.blockAt(height)!.parentHash).toBe(old[height - 1])
    expect(ledger.transactionsByHash(submitted.hash)[0].height).toBe(height)
    expect(ledger.vaultState.documents[hash('reorged')]).toBeDefined()
  })

  it('with drop, the transactions are gone and the same nonce can be submitted again', () => {
    const { ledger, sponsor } = newLedger()
    const call = signedCall(ledger, attest('dropped'), alice, sponsor, 'drop-nonce-1')
    const first = ledger.submitCall(call)
    ledger.produceBlock()
    ledger.reorg(ledger.tip.height - 1, { drop: true })
    expect(ledger.transactionsByHash(first.hash)).toEqual([])
    expect(ledger.vaultState.documents[hash('dropped')]).toBeUndefined()
    expect(ledger.submitCall(call)).toEqual({ ...first, duplicate: false })
  })

  it('refuses heights that are not below the tip', () => {
    const { ledger } = newLedger()
    expect(() => ledger.reorg(ledger.tip.height)).toThrow(/reorg needs a height/)
    expect(() => ledger.reorg(-1)).toThrow(/reorg needs a height/)
  })
})

describe('the saved chain', () => {
  let dir: string
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'chain-b-devnet-'))))
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  /** A new chain in the folder, with a sponsor holding DUST from its first block. */
  async function fundedChain(seed: string) {
    const chain = await openChain({ seed, epochLength: 60 }, dir)
    const sponsor = key(`${seed} sponsor`)
    chain.ledger.grantDust(sponsor.publicKey, 10n ** 18n)
    chain.ledger.produceBlock()
    return { ...chain, sponsor }
  }

  it('resumes after a restart with the same blocks, state and mempool, also after a reorg', async () => {
    const first = await fundedChain('saved')
    const sponsor = first.sponsor
    first.ledger.submitCall(signedCall(first.ledger, attest('kept'), alice, sponsor))
    first.ledger.produceBlock()
    first.ledger.produceBlock()
    first.ledger.reorg(1)
    const pending = first.ledger.submitCall(signedCall(first.ledger, attest('pending'), alice, sponsor))
    const tip = first.ledger.tip
    const state = first.ledger.vaultState
    first.close()

    const second = await openChain({ seed: 'other seed is ignored', epochLength: 5 }, dir)
    expect(second.resumed).toBe(true)
    expect(second.ledger.seed).toBe('saved')
    expect(second.ledger.tip.hash).toBe(tip.hash)
    expect(second.ledger.vaultState).toEqual(state)
    expect(second.ledger.submitCall(signedCall(second.ledger, attest('pending'), alice, sponsor, 'x'.repeat(8))).duplicate).toBe(false)
    second.ledger.produceBlock()
    expect(second.ledger.transactionsByHash(pending.hash)).toHaveLength(1)
    second.close()
    expect(readGenesis(dir)!.seed).toBe('saved')
    expect(resetState(dir).deleted).toMatchObject({ tipHeight: tip.height + 1 })
    expect(readGenesis(dir)).toBeUndefined()
  })

  it('keeps the mempool as a journal: a line appended for each accepted transaction, what is left rewritten after a block; a line cut off by a crash is left out', async () => {
    const first = await fundedChain('journal')
    const sponsor = first.sponsor
    const journal = join(dir, 'mempool.ndjson')
    const lines = () => readFileSync(journal, 'utf8').split('\n').filter(Boolean)
    expect(lines()).toEqual([])
    const written = readFileSync(journal, 'utf8')
    first.ledger.submitCall(signedCall(first.ledger, attest('journal 1'), alice, sponsor))
    // Appended: what was written stays as it was.
    expect(readFileSync(journal, 'utf8').startsWith(written)).toBe(true)
    const pending = first.ledger.submitCall(signedCall(first.ledger, attest('journal 2'), alice, sponsor))
    expect(lines()).toHaveLength(2)
    first.ledger.produceBlock()
    expect(lines()).toEqual([])
    first.ledger.submitCall(signedCall(first.ledger, attest('journal 3'), alice, sponsor))
    first.close()
    appendFileSync(journal, '{"type":"regular","nonce":"cut off')

    const second = await openChain({ seed: 'journal', epochLength: 60 }, dir)
    expect(second.ledger.mempool).toHaveLength(1)
    second.ledger.produceBlock()
    expect(second.ledger.vaultState.documents[hash('journal 3')]).toBeDefined()
    expect(second.ledger.transactionsByHash(pending.hash)).toHaveLength(1)
    second.close()
  })

  it('reads a mempool that an earlier version kept whole in mempool.json, and keeps it as a journal from then on', async () => {
    const first = await fundedChain('earlier')
    const sponsor = first.sponsor
    first.ledger.submitCall(signedCall(first.ledger, attest('earlier'), alice, sponsor))
    const mempool = first.ledger.mempool
    first.close()
    rmSync(join(dir, 'mempool.ndjson'))
    writeFileSync(join(dir, 'mempool.json'), JSON.stringify(mempool))

    const second = await openChain({ seed: 'earlier', epochLength: 60 }, dir)
    expect(second.ledger.mempool).toEqual(mempool)
    expect(existsSync(join(dir, 'mempool.json'))).toBe(false)
    expect(readFileSync(join(dir, 'mempool.ndjson'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1)
    second.ledger.produceBlock()
    expect(second.ledger.vaultState.documents[hash('earlier')]).toBeDefined()
    second.close()
  })
})
