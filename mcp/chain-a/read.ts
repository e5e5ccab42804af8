import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { READS, register } from '../tools.ts'

/**
 * The read tools of chain A: a transaction, an address's unspent outputs, a native asset, and any
 * entity set of the read service (chaina-odata) with OData query options. Reads index lazily from
 * the chain, so a transaction submitted a moment ago is read from the chain, not from a stale copy.
 */

const SERVICE = 'chaina-odata'

/** The argument formats the chain-A tools share. */
export const txHash = (description: string) => z.string().regex(/^[0-9a-fA-F]{64}$/, 'a transaction hash is 64 hexadecimal characters').describe(description)
export const address = (description: string) => z.string()
  .regex(/^addr(_test)?1[02-9ac-hj-np-z]{20,}$/, 'a payment address in bech32: addr1… (mainnet) or addr_test1… (test networks and the devnet)')
  .describe(description)
export const uuid = (description: string) => z.guid().describe(description)

const ENTITY_SETS = [
  'NetworkInformation', 'Blocks', 'Epochs', 'Transactions', 'TransactionInputs', 'TransactionOutputs',
  'TransactionInputAssets', 'TransactionOutputAssets', 'TransactionMetadata', 'Addresses', 'AddressAssets',
  'AddressUTxOs', 'AddressTransactions', 'UTxOAssets', 'Pools', 'Accounts', 'Dreps', 'LedgerProtocolParameters',
  'AssetHistory',
] as const

const row = z.looseObject({})
const lovelace = z.string().describe('Lovelace as an integer string (1 ADA = 1000000)')

type Row = Record<string, unknown>
interface Utxo extends Row { txHash: string; outputIndex: number; lovelace: string | null }
interface AssetEvent extends Row { txHash: string; action: string; amount: string; position: number }

/** Metadata payloads are JSON text in the service; an agent reads them better as JSON. */
function withParsedPayload(entry: Row): Row {
  if (typeof entry.payload !== 'string') return entry
  try {
    return { ...entry, payload: JSON.parse(entry.payload) }
  } catch {
    return entry
  }
}

const sumOf = (amounts: (string | null | undefined)[]) => amounts.reduce((sum, amount) => sum + BigInt(amount ?? 0), 0n).toString()

/** Registers get_transaction, get_utxos, get_asset_info and query_entity. */
export function registerReadTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'get_transaction',
    title: 'Get a transaction',
    description: 'A chain-A transaction by its hash: block, height, time, fee, size, validity, counts of inputs, outputs, mints and redeemers, whether it has metadata. With includeInputsOutputs, also its inputs and outputs (addresses, lovelace, datums, native assets) and its metadata by label (JSON). One metered read either way. A hash neither on chain nor known answers TRANSACTION_NOT_FOUND; a transaction just submitted is found once it is in a block (get_submission_status says when).',
    input: {
      hash: txHash('The transaction hash (transaction id): 64 hexadecimal characters'),
      includeInputsOutputs: z.boolean().default(false).describe('Also answer inputs, outputs (each with its native assets, in index order) and metadata'),
    },
    output: {
      hash: z.string(),
      blockHash: z.string().nullable(),
      blockHeight: z.number().nullable(),
      fee: lovelace.nullable(),
      inputs: z.array(row).optional().describe('With includeInputsOutputs: the spent outputs (collateral and reference inputs marked)'),
      outputs: z.array(row).optional().describe('With includeInputsOutputs: the created outputs'),
      metadata: z.array(row).optional().describe('With includeInputsOutputs: { label, payload } per metadata label, payload as JSON'),
    },
    annotations: READS,
    async run({ hash, includeInputsOutputs }, calls) {
      const expand = includeInputsOutputs ? 'inputs($orderby=inputIndex;$expand=assets),outputs($orderby=outputIndex;$expand=assets),metadata($orderby=label)' : undefined
      const transaction = await calls.read<Row>(SERVICE, `Transactions('${hash.toLowerCase()}')`, { expand })
      const metadata = transaction.metadata as Row[] | undefined
      return metadata ? { ...transaction, metadata: metadata.map(withParsedPayload) } : transaction
    },
  })

  register(server, client, {
    name: 'get_utxos',
    title: 'Unspent outputs of an address',
    description: 'Every unspent output (UTxO) of a chain-A address: txHash, outputIndex, lovelace, datum hash or inline datum, reference script, with their sum. With includeAssets, each also carries its native assets (one more metered read). The build tools select inputs themselves: this is for looking, e.g. to see that a transfer arrived or to find a script output (txHash, outputIndex) for build_plutus_spend. A never-used address answers no outputs.',
    input: {
      address: address('The address in bech32 (addr_test1… on test networks and the devnet, addr1… on mainnet); it must be on the network this gateway serves'),
      includeAssets: z.boolean().default(false).describe('Also answer the native assets each output holds (unit, policyId, assetName, quantity)'),
    },
    output: {
      address: z.string(),
      count: z.number().describe('How many unspent outputs'),
      totalLovelace: lovelace.describe('Lovelace in all the outputs, as an integer string'),
      utxos: z.array(row).describe('The outputs, by txHash and outputIndex'),
    },
    annotations: READS,
    async run({ address, includeAssets }, calls) {
      const { value: utxos } = await calls.action<{ value: Utxo[] }>(SERVICE, 'GetUTxOsByAddress', { address })
      const answer = { address, count: utxos.length, totalLovelace: sumOf(utxos.map(utxo => utxo.lovelace)) }
      if (!includeAssets) return { ...answer, utxos }
      const { value: assets } = await calls.read<{ value: Utxo[] }>(SERVICE, 'UTxOAssets', { filter: `address eq '${address}'`, top: 1000 })
      const held = (utxo: Utxo) => assets.filter(asset => asset.txHash === utxo.txHash && asset.outputIndex === utxo.outputIndex)
        .map(({ txHash: _t, outputIndex: _o, address: _a, ...asset }) => asset)
      return { ...answer, utxos: utxos.map(utxo => ({ ...utxo, assets: held(utxo) })) }
    },
  })

  register(server, client, {
    name: 'get_asset_info',
    title: 'Native asset',
    description: 'A chain-A native asset by its unit (policy id + asset name in hex): policy id, name (hex and UTF-8 text), CIP-14 fingerprint, the quantity in circulation (minted minus burned), how often it was minted or burned, and the first mint transaction (its metadata label 721 holds CIP-25 metadata: get_transaction with includeInputsOutputs). With includeHistory, every mint and burn, newest first. Costs two metered calls (history, then the first mint\'s output assets). A unit never minted answers ASSET_NOT_FOUND.',
    input: {
      unit: z.string().regex(/^[0-9a-fA-F]{56}([0-9a-fA-F]{2}){0,32}$/, 'a unit is the 56-hex policy id followed by the asset name in hex (0 to 64 hex characters)')
        .describe('The asset unit: the 56-hex policy id followed by the asset name in hex (up to 32 bytes), e.g. what build_mint_transaction answers in minted[].unit'),
      includeHistory: z.boolean().default(false).describe('Also answer every mint and burn (txHash, action minted|burned, amount), newest first'),
    },
    output: {
      unit: z.string(),
      policyId: z.string().describe('56 hex'),
      assetNameHex: z.string(),
      assetName: z.string().nullable().describe('The name as UTF-8 text when printable, else null'),
      fingerprint: z.string().nullable().describe('CIP-14 fingerprint, asset1…'),
      quantity: z.string().describe('In circulation: everything minted minus everything burned, an integer string'),
      mintOrBurnCount: z.number(),
      initialMintTxHash: z.string(),
      history: z.array(row).optional().describe('With includeHistory: the mint and burn events, newest first'),
    },
    annotations: READS,
    async run({ unit, includeHistory }, calls) {
      const normalised = unit.toLowerCase()
      const { value: events } = await calls.action<{ value: AssetEvent[] }>(SERVICE, 'GetAssetHistory', { unit: normalised })
      const amounts = (action: string) => events.filter(event => event.action === action).map(event => event.amount)
      const quantity = (BigInt(sumOf(amounts('minted'))) - BigInt(sumOf(amounts('burned')))).toString()
      const initialMint = [...events].reverse().find(event => event.action === 'minted') ?? events[events.length - 1]
      const { value: [minted] } = await calls.read<{ value: Row[] }>(SERVICE, 'TransactionOutputAssets', {
        filter: `txHash eq '${initialMint.txHash}' and unit eq '${normalised}'`, select: 'assetName,fingerprint', top: 1,
      })
      return {
        unit: normalised,
        policyId: normalised.slice(0, 56),
        assetNameHex: normalised.slice(56),
        assetName: minted?.assetName ?? null,
        fingerprint: minted?.fingerprint ?? null,
        quantity,
        mintOrBurnCount: events.length,
        initialMintTxHash: initialMint.txHash,
        ...(includeHistory && { history: events.map(({ unit: _u, ...event }) => event) }),
      }
    },
  })

  register(server, client, {
    name: 'query_entity',
    title: 'Query a chain-A entity set',
    description: `Reads an entity set of the chain-A read service with OData query options, one metered read: e.g. Blocks with orderby "height desc" and top 1 for the tip; AddressTransactions with filter "address eq 'addr_test1…'" and expand "transaction"; Pools with select "poolId,ticker,liveStake"; AssetHistory with filter "unit eq '…'". Blocks, Epochs, Pools and Dreps are complete; other sets are complete when filtered by their parent (a block's transactions by blockHash, a transaction's outputs by txHash, an address's UTxOs or assets by address), else they hold what has been indexed. Amounts are integer strings of lovelace, times UTC.`,
    input: {
      entity: z.enum(ENTITY_SETS).describe('The entity set'),
      filter: z.string().max(2000).optional().describe(`OData $filter, e.g. "epoch eq 0", "txHash eq '<64 hex>' and lovelace gt 2000000" (strings in single quotes)`),
      select: z.string().max(1000).optional().describe('OData $select: comma-separated properties, e.g. "hash,height,time"'),
      expand: z.string().max(1000).optional().describe('OData $expand: navigations, with nested options in parentheses, e.g. "outputs($expand=assets),metadata" on Transactions'),
      orderby: z.string().max(500).optional().describe('OData $orderby, e.g. "height desc"'),
      top: z.number().int().min(1).max(100).default(20).describe('At most this many rows (1 to 100); page on with skip'),
      skip: z.number().int().min(0).optional().describe('Rows to skip (paging)'),
      count: z.boolean().default(false).describe('Also answer how many rows match the filter in all (count), regardless of top and skip'),
    },
    output: {
      entity: z.string(),
      rows: z.array(row),
      count: z.number().optional().describe('With count: how many rows match in all'),
    },
    annotations: READS,
    async run({ entity, count, ...options }, calls) {
      const { value: rows, count: total } = await calls.read<{ value: Row[]; count?: number }>(SERVICE, entity, { ...options, ...(count && { count }) })
      return { entity, rows, ...(total !== undefined && { count: total }) }
    },
  })
}
