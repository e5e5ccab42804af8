import { embeddedDevnet } from '../../devnet/chain-b/embedded.ts'
import type { ChainBDevnet } from '../../devnet/chain-b/index.ts'
import type { Block } from '../../devnet/chain-b/types.ts'

/**
 * Helpers for suites that run against the chain-B devnet the application under test embedded
 * (server.ts starts it in the test profile with blocks on request only), or a devnet of their own.
 */

/** The devnet the application under test started. */
export function runningChainB(): ChainBDevnet {
  const devnet = embeddedDevnet()
  if (!devnet) throw new Error('the application did not start an embedded chain-B devnet')
  return devnet
}

/** Produces n blocks now (the mempool goes into the first); answers the new blocks. */
export function produceBlocks(n = 1, devnet: ChainBDevnet = runningChainB()): Block[] {
  const blocks: Block[] = []
  for (let i = 0; i < n; i++) blocks.push(devnet.produceBlock())
  return blocks
}

/**
 * Replaces the blocks above `height` by as many new ones (or `blocks`), with other hashes; their
 * regular transactions go back to the mempool (and into the first new block) unless `drop`.
 */
export function reorg(height: number, options: { drop?: boolean; blocks?: number } = {}, devnet: ChainBDevnet = runningChainB()) {
  return devnet.reorg(height, options)
}

/** The devnet's tip height, finalized height, vault address and mempool size. */
export function chainBStatus(devnet: ChainBDevnet = runningChainB()) {
  return devnet.status()
}

/** Polls until `probe` answers something truthy (not undefined, null or false); answers it. */
export async function waitFor<T>(probe: () => T | Promise<T>, options: { timeoutMs?: number; intervalMs?: number; message?: string } = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 5000, intervalMs = 20 } = options
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`${options.message ?? 'waitFor timed out'} after ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`)
    await new Promise(resolve => setTimeout(resolve, intervalMs))
  }
}

/** Produces blocks until `probe` is truthy (for a job waiting on a block); answers it. */
export async function produceUntil<T>(probe: () => T | Promise<T>, options: { maxBlocks?: number; intervalMs?: number; devnet?: ChainBDevnet } = {}): Promise<NonNullable<T>> {
  const { maxBlocks = 50, intervalMs = 20 } = options
  for (let i = 0; i < maxBlocks; i++) {
    const value = await probe()
    if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>
    produceBlocks(1, options.devnet ?? runningChainB())
    await new Promise(resolve => setTimeout(resolve, intervalMs))
  }
  throw new Error(`produceUntil: still not there after ${maxBlocks} blocks`)
}
