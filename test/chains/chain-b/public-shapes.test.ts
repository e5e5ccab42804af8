import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { buildSchema, graphql } from 'graphql'
import { withIndexerInt } from '../../../devnet/chain-b/indexer-int.ts'
import { IndexerClient } from '../../../srv/chains/chain-b/indexer-client.ts'
import { BLOCK_QUERY, TRANSACTIONS_QUERY } from '../../../srv/chains/chain-b/indexer-queries.ts'

/**
 * The adapter against the public indexer's shapes, where they differ from what a devnet makes
 * easy: a block's time in Unix milliseconds (the node's), owners as Bech32m addresses recorded on
 * Midnight's public networks, fees beyond 2^64, a contract update, a system transaction, identifiers
 * longer than a hash, a result without segments. The upstream here executes the adapter's own
 * documents against the published schema (srv/chains/chain-b/indexer-schema.graphql), so every
 * answer is one the public indexer could give: a value of the wrong type fails the test.
 * The recorded addresses: test/fixtures/chain-b/public-unshielded-addresses.json.
 */

// Its integers 64-bit, as the public indexer's server writes them (GraphQL's reference Int stops at 32 bits).
const schema = withIndexerInt(buildSchema(readFileSync(join(__dirname, '../../../srv/chains/chain-b/indexer-schema.graphql'), 'utf8')))
const addresses = (JSON.parse(readFileSync(join(__dirname, '../../fixtures/chain-b/public-unshielded-addresses.json'), 'utf8')) as { addresses: string[] }).addresses
const hex = (byte: string, bytes = 32) => byte.repeat(bytes)

/** Unix milliseconds of a public block: not a whole second. */
const BLOCK_TIME_MS = 1_764_000_006_123
const utxo = (owner: string, index: number) => ({ owner, tokenType: hex('00'), value: '18446744073709551615', intentHash: hex('1a'), outputIndex: index })

const transfer = {
  __typename: 'RegularTransaction', id: 40_001, hash: hex('2b'), protocolVersion: 1_000_000,
  contractActions: [{ __typename: 'ContractUpdate', address: hex('3c') }],
  unshieldedCreatedOutputs: [utxo(addresses[0], 0), utxo(addresses[4], 1)],
  unshieldedSpentOutputs: [utxo(addresses[2], 0)],
  zswapLedgerEvents: [{ id: 7 }, { id: 8 }],
  identifiers: [`00000000${hex('4d')}`],
  transactionResult: { status: 'PARTIAL_SUCCESS', segments: null },
  fees: { paidFees: '123456789012345678901', estimatedFees: '123456789012345678999' },
  zswapMerkleTreeRoot: hex('5e'), zswapStartIndex: 90_000, zswapEndIndex: 90_002,
}
const system = {
  __typename: 'SystemTransaction', id: 40_002, hash: hex('6f'), protocolVersion: 1_000_000,
  contractActions: [], unshieldedCreatedOutputs: [], unshieldedSpentOutputs: [], zswapLedgerEvents: [],
}
const block = { hash: hex('7a'), height: 233_106, protocolVersion: 1_000_000, timestamp: BLOCK_TIME_MS, author: hex('8b'), parent: { hash: hex('9c') }, transactions: [transfer, system] }

let server: Server
let client: IndexerClient

beforeAll(async () => {
  const root = {
    block: () => block,
    transactions: () => [{ ...transfer, block: { height: block.height, hash: block.hash, timestamp: block.timestamp } }],
  }
  server = createServer((req, res) => {
    let body = ''
    req.on('data', chunk => (body += chunk))
    req.on('end', async () => {
      const { query, variables } = JSON.parse(body) as { query: string; variables: Record<string, unknown> }
      const answer = await graphql({ schema, source: query, rootValue: root, variableValues: variables })
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(answer))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  client = new IndexerClient({ indexerUrl: `${base}/api/v4/graphql`, indexerWsUrl: `ws://127.0.0.1:9/api/v4/graphql/ws`, timeoutMs: 2000 })
})
afterAll(() => new Promise(resolve => server.close(resolve)))

test("the upstream answers by the published schema: the adapter's documents run against it without errors", async () => {
  for (const source of [BLOCK_QUERY, TRANSACTIONS_QUERY]) {
    const answer = await graphql({ schema, source, rootValue: { block: () => block, transactions: () => [] }, variableValues: { offset: { hash: block.hash } } })
    expect(answer.errors).toBeUndefined()
  }
})

test('a block: its time in seconds from the milliseconds, owners, amounts and identifiers as given, the update and the system transaction', async () => {
  const read = await client.block({ height: block.height })
  expect(read).toMatchObject({ hash: block.hash, height: 233_106, timestamp: 1_764_000_006, author: block.author, parentHash: block.parent.hash })
  const [regular, systemTx] = read!.transactions
  expect(regular).toMatchObject({
    kind: 'RegularTransaction', identifiers: transfer.identifiers,
    result: { status: 'PARTIAL_SUCCESS', segments: [] },
    fees: { paidFees: '123456789012345678901', estimatedFees: '123456789012345678999' },
    contractActions: [{ kind: 'ContractUpdate', address: hex('3c'), entryPoint: null }],
    zswapLedgerEvents: 2, startIndex: 90_000, endIndex: 90_002,
  })
  expect(regular.unshieldedCreatedOutputs.map(output => output.owner)).toEqual([addresses[0], addresses[4]])
  expect(regular.unshieldedSpentOutputs[0]).toEqual(utxo(addresses[2], 0))
  expect(systemTx).toMatchObject({ kind: 'SystemTransaction', identifiers: [], result: null, fees: null, merkleTreeRoot: null })
})

test("a transaction by hash: its block's time in seconds", async () => {
  const [read] = await client.transactions({ hash: transfer.hash })
  expect(read).toMatchObject({ hash: transfer.hash, blockHeight: block.height, blockHash: block.hash, blockTimestamp: 1_764_000_006 })
})
