import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildSchema, parse, validate } from 'graphql'
import WebSocket from 'ws'
import { ChainBDevnet } from '../../../devnet/chain-b/index.ts'
import { IndexerClient } from '../../../srv/chains/chain-b/indexer-client.ts'
import { ADAPTER_DOCUMENTS } from '../../../srv/chains/chain-b/indexer-queries.ts'
import type { ChainBBlock } from '../../../srv/chains/chain-b/port.ts'
import { parseUnshieldedAddress } from '../../../srv/chains/chain-b/unshielded-address.ts'
import { decodeVaultState } from '../../../srv/chains/chain-b/vault-codec.ts'
import { waitFor } from '../../support/chain-b.ts'
import { hash, key, signedCall } from './helpers.ts'

/**
 * The devnet's indexer API over HTTP and WebSocket, read by the one chain-B adapter: every document
 * the adapter sends validates against our schema file, every answer comes without errors and maps
 * into the port's types; subscriptions follow new blocks and reorgs; the submission API's answers.
 */

const SCHEMA = buildSchema(readFileSync(join(__dirname, '../../../srv/chains/chain-b/indexer-schema.graphql'), 'utf8'))

let devnet: ChainBDevnet
let client: IndexerClient
const alice = key('alice')
const sponsor = key('http sponsor')

beforeAll(async () => {
  devnet = await ChainBDevnet.start({ seed: 'indexer-test', blockTimeMs: 0, epochLength: 600, activity: false, port: 0, finalityDepth: 1 })
  client = new IndexerClient({ indexerUrl: devnet.indexerUrl, indexerWsUrl: devnet.indexerWsUrl, submitUrl: devnet.submitUrl, timeoutMs: 2000 })
  // Some of everything: transfers, shielded outputs, a partial success (the activity generator's kinds), calls.
  await client.fundSponsor(sponsor.publicKey, '1000000000000000000')
  for (const kind of ['unshielded', 'shielded', 'vault', 'vaultFailure', 'partial', 'system'] as const) {
    devnet.activity.round(kind)
    devnet.produceBlock()
  }
})
afterAll(() => devnet.stop())

describe('the schema', () => {
  it.each(Object.entries(ADAPTER_DOCUMENTS))('%s validates against indexer-schema.graphql', (_, document) => {
    expect(validate(SCHEMA, parse(document))).toEqual([])
  })

  it('keeps the published names: @oneOf offsets, the interfaces and their implementations', () => {
    for (const name of ['BlockOffset', 'TransactionOffset', 'ContractActionOffset']) expect((SCHEMA.getType(name) as any).isOneOf).toBe(true)
    expect(SCHEMA.getPossibleTypes(SCHEMA.getType('Transaction') as any).map(t => t.name).sort()).toEqual(['RegularTransaction', 'SystemTransaction'])
    expect(SCHEMA.getPossibleTypes(SCHEMA.getType('ContractAction') as any).map(t => t.name).sort()).toEqual(['ContractCall', 'ContractDeploy', 'ContractUpdate'])
    expect(Object.keys(SCHEMA.getQueryType()!.getFields())).toEqual(['block', 'transactions', 'contractAction', 'currentEpochInfo'])
  })

  it('answers every block of the chain to the adapter without errors', async () => {
    for (let height = 0; height <= devnet.ledger.tip.height; height++) {
      const answer = await client.query<{ block: unknown }>(ADAPTER_DOCUMENTS.BLOCK_QUERY, { offset: { height } })
      expect(answer.block).toBeTruthy()
    }
  })

  it('refuses an offset with both members (@oneOf) and an unknown field', async () => {
    await expect(client.query(ADAPTER_DOCUMENTS.BLOCK_QUERY, { offset: { height: 1, hash: 'ab' } })).rejects.toMatchObject({ code: 'CHAIN_B_UPSTREAM_ERROR' })
    await expect(client.query('{ block { nope } }', {})).rejects.toMatchObject({ status: 502 })
  })
})

describe('the adapter reads', () => {
  it('the tip and blocks by height and by hash', async () => {
    const tip = await client.tip()
    expect(tip).toMatchObject({ height: devnet.ledger.tip.height, hash: devnet.ledger.tip.hash, protocolVersion: 8000, timestamp: devnet.ledger.tip.timestamp })
    // On the wire a block's time is Unix milliseconds, as on the public indexer (beyond GraphQL's 32-bit Int).
    const { block } = await client.query<{ block: { timestamp: number } }>('{ block { timestamp } }', {})
    expect(block.timestamp).toBe(devnet.ledger.tip.timestamp * 1000)
    expect(devnet.ledger.producers.map(p => p.publicKey)).toContain(tip.author)
    expect(await client.block({ hash: tip.hash })).toEqual(tip)
    const genesis = await client.block({ height: 0 })
    expect(genesis!.parentHash).toBeNull()
    // The vault's deployment is a regular transaction without fee; the genesis distribution is system transactions.
    const deploy = genesis!.transactions.find(tx => tx.contractActions.length)
    const system = genesis!.transactions.filter(tx => tx !== deploy)
    expect(deploy).toMatchObject({ kind: 'RegularTransaction', result: { status: 'SUCCESS' }, fees: { paidFees: '0' }, contractActions: [{ kind: 'ContractDeploy', address: devnet.vaultAddress }] })
    expect(system.every(tx => tx.kind === 'SystemTransaction' && tx.result === null && tx.fees === null)).toBe(true)
    expect(await client.block({ height: 9999 })).toBeNull()
  })

  it('transactions by hash and by identifier, with results, segments, fees, UTXOs and zswap events', async () => {
    const blocks = await Promise.all(Array.from({ length: devnet.ledger.tip.height + 1 }, (_, height) => client.block({ height })))
    const regular = blocks.flatMap(b => b!.transactions).filter(tx => tx.kind === 'RegularTransaction')
    const statuses = new Set(regular.map(tx => tx.result!.status))
    expect([...statuses].sort()).toEqual(['FAILURE', 'PARTIAL_SUCCESS', 'SUCCESS'])
    const partial = regular.find(tx => tx.result!.status === 'PARTIAL_SUCCESS')!
    expect(partial.result!.segments).toEqual([{ id: 0, success: true }, { id: 1, success: false }])
    const transfer = regular.find(tx => tx.unshieldedSpentOutputs.length && tx.result!.status === 'SUCCESS')!
    const spent = transfer.unshieldedSpentOutputs.reduce((sum, u) => sum + BigInt(u.value), 0n)
    expect(transfer.unshieldedCreatedOutputs.reduce((sum, u) => sum + BigInt(u.value), 0n)).toBe(spent)
    // Owners are Midnight's unshielded addresses of the devnet's network, of the accounts' ids.
    const accounts = new Set(devnet.ledger.accounts.map(account => account.id))
    for (const utxo of [...transfer.unshieldedSpentOutputs, ...transfer.unshieldedCreatedOutputs]) {
      expect(utxo.owner).toMatch(/^mn_addr_undeployed1[02-9ac-hj-np-z]{58}$/)
      expect(accounts.has(parseUnshieldedAddress(utxo.owner)!.id)).toBe(true)
    }
    const shielded = regular.find(tx => tx.zswapLedgerEvents > 0)!
    expect(shielded.endIndex! - shielded.startIndex!).toBe(shielded.zswapLedgerEvents)
    expect(BigInt(shielded.fees!.paidFees)).toBeGreaterThan(0n)
    const [byHash] = await client.transactions({ hash: transfer.hash })
    const [byIdentifier] = await client.transactions({ identifier: transfer.identifiers.at(-1)! })
    expect(byHash).toEqual(byIdentifier)
    expect(byHash.blockHeight).toBe(blocks.find(b => b!.transactions.some(tx => tx.hash === transfer.hash))!.height)
    expect(await client.transactions({ hash: hash('nothing') })).toEqual([])
  })

  it('the contract action: latest, at a block, at a transaction, with the vault state', async () => {
    const address = devnet.vaultAddress
    const latest = await client.contractAction(address)
    expect(latest).toMatchObject({ kind: 'ContractCall', address })
    expect(await decodeVaultState(latest!.state)).toEqual(devnet.ledger.vaultState)
    expect(await client.contractAction(address, { blockOffset: { height: 0 } })).toMatchObject({ kind: 'ContractDeploy', entryPoint: null })
    const deploy = devnet.ledger.blockAt(0)!.transactions.find(tx => tx.actions.length)!
    expect(await client.contractAction(address, { transactionOffset: { hash: deploy.hash } })).toMatchObject({ kind: 'ContractDeploy' })
    expect(await client.contractAction(hash('no contract'))).toBeNull()
  })

  it('the current epoch', async () => {
    expect(await client.currentEpoch()).toEqual(devnet.ledger.epochAt(Math.floor(Date.now() / 1000)))
  })
})

describe('the submission API through the adapter', () => {
  it('submits once per nonce and maps rejections to their codes', async () => {
    const call = signedCall(devnet.ledger, { circuit: 'attest', args: { payloadHash: hash('http doc'), metadataHash: hash('m') } }, alice, sponsor)
    const first = await client.submit(call)
    expect(await client.submit(call)).toEqual({ ...first, duplicate: true })
    await expect(client.submit({ ...call, nonce: 'other-nonce-1' })).rejects.toMatchObject({ status: 400, code: 'INVALID_SIGNATURE' })
    await expect(client.submit(signedCall(devnet.ledger, { circuit: 'nope', args: {} }, alice, sponsor))).rejects.toMatchObject({ status: 400, code: 'UNKNOWN_CIRCUIT' })
    await expect(client.submit(signedCall(devnet.ledger, { circuit: 'attest', args: { payloadHash: 'x' } }, alice, sponsor))).rejects.toMatchObject({ status: 400, code: 'INVALID_ARGUMENTS' })
    await expect(client.submit(signedCall(devnet.ledger, { circuit: 'attest', args: { payloadHash: hash('p'), metadataHash: hash('m') } }, alice, key('broke')))).rejects.toMatchObject({ status: 402, code: 'SPONSOR_EXHAUSTED' })
    devnet.produceBlock()
    const [tx] = await client.transactions({ identifier: first.identifier })
    expect(tx.result!.status).toBe('SUCCESS')
    expect(BigInt(await client.sponsorBalance(sponsor.publicKey))).toBeLessThan(10n ** 18n)
  })

  it('passes an upstream 429 on as 429 UPSTREAM_RATE_LIMITED with its Retry-After, and a 5xx as 503 CHAIN_B_UNAVAILABLE with one', async () => {
    const { createServer } = await import('node:http')
    let status = 429
    const upstream = createServer((_, res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '7' } : {}) })
      res.end(JSON.stringify({ errors: [{ message: 'slow down' }] }))
    })
    await new Promise<void>(resolve => upstream.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/api/v4`
    const limited = new IndexerClient({ indexerUrl: `${base}/graphql`, indexerWsUrl: `ws://127.0.0.1:9/api/v4/graphql/ws`, submitUrl: `${base}/submit`, timeoutMs: 2000 })
    try {
      await expect(limited.tip()).rejects.toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED', retryAfter: 7 })
      await expect(limited.sponsorBalance(sponsor.publicKey)).rejects.toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED', retryAfter: 7 })
      status = 502
      await expect(limited.tip()).rejects.toMatchObject({ status: 503, code: 'CHAIN_B_UNAVAILABLE', retryAfter: 5 })
    } finally {
      await new Promise(resolve => upstream.close(resolve))
    }
  })

  it('answers 503 CHAIN_B_UNAVAILABLE when the devnet does not answer, and when it has no submission API', async () => {
    const down = new IndexerClient({ indexerUrl: 'http://127.0.0.1:9/api/v4/graphql', indexerWsUrl: 'ws://127.0.0.1:9/api/v4/graphql/ws', submitUrl: 'http://127.0.0.1:9/api/v4/submit', timeoutMs: 500 })
    await expect(down.tip()).rejects.toMatchObject({ status: 503, code: 'CHAIN_B_UNAVAILABLE' })
    await expect(down.sponsorBalance(sponsor.publicKey)).rejects.toMatchObject({ status: 503, code: 'CHAIN_B_UNAVAILABLE' })
    const error = await new Promise<Error>(resolve => down.subscribeBlocks(0, () => undefined, resolve))
    expect(error).toMatchObject({ code: 'CHAIN_B_UNAVAILABLE' })
    const readOnly = new IndexerClient({ indexerUrl: devnet.indexerUrl, indexerWsUrl: devnet.indexerWsUrl, timeoutMs: 500 })
    await expect(readOnly.sponsorBalance(sponsor.publicKey)).rejects.toMatchObject({ status: 503, code: 'CHAIN_B_SUBMIT_NOT_CONFIGURED' })
  })
})

describe('subscriptions (graphql-transport-ws)', () => {
  it('blocks: from a height, then each new block, then the replacements of a reorg', async () => {
    const seen: ChainBBlock[] = []
    const errors: Error[] = []
    const stop = client.subscribeBlocks(1, block => seen.push(block), error => errors.push(error))
    const tip = devnet.ledger.tip.height
    await waitFor(() => seen.length === tip)
    expect(seen.map(b => b.height)).toEqual(Array.from({ length: tip }, (_, i) => i + 1))
    devnet.produceBlock()
    await waitFor(() => seen.length === tip + 1)
    const replaced = seen.at(-1)!.hash
    devnet.reorg(tip)
    await waitFor(() => seen.length === tip + 2)
    expect(seen.at(-1)).toMatchObject({ height: tip + 1 })
    expect(seen.at(-1)!.hash).not.toBe(replaced)
    expect(seen.at(-1)!.parentHash).toBe(seen.at(-2)!.parentHash)
    stop()
    devnet.produceBlock()
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(seen).toHaveLength(tip + 2)
    expect(errors).toEqual([])
  })

  it('contractActions, and the protocol: ack, ping/pong, errors, complete', async () => {
    const socket = new WebSocket(devnet.indexerWsUrl, 'graphql-transport-ws')
    const messages: any[] = []
    socket.on('message', raw => messages.push(JSON.parse(String(raw))))
    await new Promise(resolve => socket.once('open', resolve))
    expect(socket.protocol).toBe('graphql-transport-ws')
    socket.send(JSON.stringify({ type: 'connection_init' }))
    await waitFor(() => messages.find(m => m.type === 'connection_ack'))
    socket.send(JSON.stringify({ type: 'ping' }))
    await waitFor(() => messages.find(m => m.type === 'pong'))
    socket.send(JSON.stringify({ id: 'bad', type: 'subscribe', payload: { query: 'subscription { nothing }' } }))
    await waitFor(() => messages.find(m => m.id === 'bad' && m.type === 'error'))
    socket.send(JSON.stringify({ id: 'a', type: 'subscribe', payload: { query: ADAPTER_DOCUMENTS.CONTRACT_ACTIONS_SUBSCRIPTION, variables: { address: devnet.vaultAddress, offset: { height: 0 } } } }))
    const actions = devnet.ledger.actionsOf(devnet.vaultAddress).length
    await waitFor(() => messages.filter(m => m.id === 'a' && m.type === 'next').length === actions)
    expect(messages.find(m => m.id === 'a').payload.data.contractActions).toMatchObject({ __typename: 'ContractDeploy', address: devnet.vaultAddress, transaction: { block: { height: 0 } } })
    await client.submit(signedCall(devnet.ledger, { circuit: 'attest', args: { payloadHash: hash('live'), metadataHash: hash('m') } }, alice, sponsor))
    devnet.produceBlock()
    await waitFor(() => messages.filter(m => m.id === 'a' && m.type === 'next').length === actions + 1)
    expect(messages.filter(m => m.id === 'a').at(-1).payload.data.contractActions).toMatchObject({ __typename: 'ContractCall', entryPoint: 'attest' })
    socket.send(JSON.stringify({ id: 'a', type: 'complete' }))
    socket.close()
  })

  it('closes a connection that subscribes before connection_init (4401)', async () => {
    const socket = new WebSocket(devnet.indexerWsUrl, 'graphql-transport-ws')
    await new Promise(resolve => socket.once('open', resolve))
    const closed = new Promise<number>(resolve => socket.once('close', code => resolve(code)))
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: ADAPTER_DOCUMENTS.BLOCKS_SUBSCRIPTION } }))
    expect(await closed).toBe(4401)
  })
})

describe('devnet control over HTTP', () => {
  it('produces blocks, reorgs, reports status and a transaction failure', async () => {
    const post = (path: string, body: object) => fetch(devnet.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async r => ({ status: r.status, body: await r.json() }))
    const before = devnet.ledger.tip.height
    expect((await post('/api/v4/devnet/blocks', { count: 2 })).body).toMatchObject({ tipHeight: before + 2, finalizedHeight: before + 1, vaultAddress: devnet.vaultAddress })
    const reorged = await post('/api/v4/devnet/reorg', { height: before, drop: true })
    expect(reorged.body).toMatchObject({ removed: 2, tipHeight: before + 2 })
    expect((await post('/api/v4/devnet/reorg', { height: 99999 })).body.error.code).toBe('INVALID_REORG')
    expect((await post('/api/v4/devnet/blocks', { count: 0 })).status).toBe(400)
    const failed = devnet.ledger.blocks.flatMap(b => b.transactions).find(tx => tx.failure)!
    const answer = await fetch(`${devnet.url}/api/v4/devnet/transactions/${failed.hash}`).then(r => r.json())
    expect(answer).toMatchObject({ status: 'FAILURE', failure: { code: failed.failure!.code } })
    expect((await fetch(`${devnet.url}/api/v4/faucet`, { method: 'POST', body: '{bad' })).status).toBe(400)
  })
})
