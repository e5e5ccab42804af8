import { LedgerParameters, ZswapChainState } from '@midnight-ntwrk/ledger-v8'

/**
 * Midnight's ledger parameters as a devnet uses them: serialized as the ledger serializes them (a
 * block's `ledgerParameters` on the public indexer), with what its fee formula reads from them (the
 * fee prices, the block limits and the baseline cost of a transaction) taken out once, so that the
 * devnet prices each transaction with plain arithmetic instead of the ledger's WebAssembly.
 *
 * Loaded only in the codec's worker thread (vault-codec.ts), the process's one place for the ledger.
 */
export interface MidnightParameters {
  /** The serialized `LedgerParameters`, hex. */
  serialized: string
  /** The overall price of a full block (DUST) and each cost dimension's price factor. */
  feePrices: { overallPrice: number; readFactor: number; computeFactor: number; blockUsageFactor: number; writeFactor: number }
  /** A block's capacity in each dimension: picoseconds of reading and of compute, bytes of block space, written and churned. */
  blockLimits: { readTime: number; computeTime: number; blockUsage: number; bytesWritten: number; bytesChurned: number }
  /** What every transaction costs before its contents (picoseconds). */
  baselineCost: { readTime: number; computeTime: number }
}

/** What a devnet takes from Midnight's ledger besides the vault: its parameters, and the zswap state of a contract holding no coin. */
export interface MidnightLedgerDefaults {
  parameters: MidnightParameters
  /** A serialized `ZswapChainState` without coins, hex: the vault's, as a contract action's `zswapState` carries it. */
  emptyZswapState: string
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

export function midnightLedgerDefaults(): MidnightLedgerDefaults {
  return { parameters: midnightParametersOf(LedgerParameters.initialParameters()), emptyZswapState: hex(new ZswapChainState().serialize()) }
}

/** A probe well inside every block limit: the ledger normalizes a cost by the limits, which gives them back. */
const PROBE = { readTime: 1_000_000_000n, computeTime: 1_000_000_000n, blockUsage: 1_000n, bytesWritten: 1_000n, bytesChurned: 1_000n }

/** What the devnet's fee formula reads from a set of Midnight's parameters (the initial ones, or a node's at some block). */
export function midnightParametersOf(parameters: LedgerParameters): MidnightParameters {
  const normalized = parameters.normalizeFullness(PROBE)
  const limit = (dimension: keyof typeof PROBE) => Math.round(Number(PROBE[dimension]) / normalized[dimension])
  const { readTime, computeTime } = parameters.transactionCostModel.baselineCost
  return {
    serialized: hex(parameters.serialize()),
    feePrices: { ...parameters.feePrices },
    blockLimits: { readTime: limit('readTime'), computeTime: limit('computeTime'), blockUsage: limit('blockUsage'), bytesWritten: limit('bytesWritten'), bytesChurned: limit('bytesChurned') },
    baselineCost: { readTime: Number(readTime), computeTime: Number(computeTime) },
  }
}
