import cds from '@sap/cds'
import type { ChainADevnet } from '../devnet/chain-a/index.ts'
import { BlockfrostAdapter } from '../srv/chains/chain-a/blockfrost.ts'
import { KoiosAdapter } from '../srv/chains/chain-a/koios.ts'
import { OgmiosAdapter } from '../srv/chains/chain-a/ogmios.ts'
import type { ChainAPort } from '../srv/chains/chain-a/port.ts'
import { figures, printLine, printRatio, sample, type Figures } from './measure.ts'
import { grow, readServiceReader } from './read-service.ts'

/**
 * The chain-A backends side by side (docs/chain-a-backends.md): the same reads through the read
 * service with each kind's adapter as the chain-a service's port, against the same devnet (it
 * speaks each API). A cold read misses the service's cache and asks the upstream; a warm one is
 * answered from the cache. Blockfrost is the baseline; each figure is measured in this run. The
 * ogmios kind answers a transaction from its own chain index, which the devnet's latency does not
 * reach once the index holds the block (the latency delays HTTP answers: Kupo's, not Ogmios's).
 */
export async function chainABackendBenchmarks({ url, devnet, rounds }: { url: string; devnet: ChainADevnet; rounds: number }) {
  const read = readServiceReader(url)
  const chainA = (await cds.connect.to('chain-a')) as unknown as { adapter?: ChainAPort }
  const kinds: Record<string, () => ChainAPort> = {
    blockfrost: () => new BlockfrostAdapter({ network: 'devnet', url: devnet.url, timeoutMs: 10_000, retries: 0, clientRateLimit: false }),
    koios: () => new KoiosAdapter({ network: 'devnet', koiosUrl: `${devnet.url}/koios/api/v1`, timeoutMs: 10_000, retries: 0 }),
    ogmios: () => new OgmiosAdapter({
      network: 'devnet', ogmiosUrl: `${devnet.url.replace(/^http/, 'ws')}/ogmios`, kupoUrl: `${devnet.url}/kupo`,
      ogmiosSyncFrom: 'origin', ogmiosIndexBlocks: 100_000, timeoutMs: 10_000, retries: 0,
    }),
  }
  const coldCount = Math.min(60, Math.max(10, Math.floor(rounds / 20)))
  const hashes = grow(devnet, coldCount * Object.keys(kinds).length * 2 + 2)

  for (const latency of [0, REMOTE_LATENCY_MS]) {
    devnet.setLatency(latency)
    console.log(`chain-A backends through the read service (devnet answering after ${latency} ms)`)
    const results: Record<string, { cold: Figures; warm: Figures; direct: Figures }> = {}
    for (const [kind, adapter] of Object.entries(kinds)) {
      const port = adapter()
      chainA.adapter = port
      // The ogmios kind's index reads the chain from its start before it answers: not part of a read.
      await port.tip()
      const cold = hashes.splice(0, coldCount)
      const coldTimes: number[] = []
      for (const hash of cold) {
        const started = performance.now()
        await read(`/Transactions('${hash}')?$expand=inputs,outputs`)
        coldTimes.push(performance.now() - started)
      }
      const warmRounds = latency ? Math.min(rounds, 200) : rounds
      const warm = await sample(warmRounds, () => read(`/Transactions('${cold[0]}')?$expand=inputs,outputs`))
      const directRounds = latency ? Math.min(coldCount, 40) : Math.min(rounds, 500)
      const direct = await sample(directRounds, () => port.transaction(cold[1]))
      results[kind] = { cold: figures(coldTimes), warm, direct }
      printLine(`${kind}: cold Transactions('<hash>') with inputs, outputs (${cold.length})`, results[kind].cold)
      printLine(`${kind}: warm, the same read again`, warm)
      printLine(`${kind}: the adapter's transaction(hash) alone`, direct)
      if (port instanceof OgmiosAdapter) await port.close()
    }
    printRatio('koios / blockfrost, cold read', results.koios.cold, results.blockfrost.cold)
    printRatio('koios / blockfrost, warm read', results.koios.warm, results.blockfrost.warm)
    printRatio('koios / blockfrost, the adapter alone', results.koios.direct, results.blockfrost.direct)
    printRatio('ogmios / blockfrost, cold read', results.ogmios.cold, results.blockfrost.cold)
    printRatio('ogmios / blockfrost, warm read', results.ogmios.warm, results.blockfrost.warm)
    printRatio('ogmios / blockfrost, the adapter alone', results.ogmios.direct, results.blockfrost.direct)
    console.log()
  }
  devnet.setLatency(0)
  chainA.adapter = undefined
}

/** Blockfrost's typical answer time seen from a server nearby (as the read-service benchmark). */
const REMOTE_LATENCY_MS = 50
