import type { BlockFrostAPI } from '@blockfrost/blockfrost-js'
import type { ChainADevnet } from '../devnet/chain-a/index.ts'
import { figures, printLine, printRatio, printValue, sample } from './measure.ts'

/**
 * Chain-A read service against the devnet: a warm keyed read through the service next to the same
 * read made directly with blockfrost-js (the baseline), a cold miss, and the upstream calls made by
 * 100 concurrent misses of one key.
 */
export async function readBenchmarks({ url, devnet, direct, rounds }: { url: string; devnet: ChainADevnet; direct: BlockFrostAPI; rounds: number }) {
  const read = readServiceReader(url)

  const hashes = grow(devnet, 150)
  const [warm, ...cold] = hashes

  console.log('chain-A read service (SQLite in memory, devnet upstream)')
  await read(`/Transactions('${warm}')?$expand=inputs,outputs,metadata`)

  const serviceRead = await sample(rounds, () => read(`/Transactions('${warm}')`))
  const directRead = await sample(rounds, () => direct.txs(warm))
  printLine(`warm Transactions('<hash>') through the service`, serviceRead)
  printLine('same read directly with blockfrost-js (/txs/{hash})', directRead)
  printRatio('service / direct', serviceRead, directRead)

  const serviceFull = await sample(rounds, () => read(`/Transactions('${warm}')?$expand=inputs,outputs,metadata`))
  const directFull = await sample(rounds, () => Promise.all([direct.txs(warm), direct.txsUtxos(warm), direct.txsMetadata(warm)]))
  printLine('warm transaction with inputs, outputs, metadata (service)', serviceFull)
  printLine('same directly (/txs/{hash}, /utxos, /metadata in parallel)', directFull)
  printRatio('service / direct', serviceFull, directFull)

  const coldTimes: number[] = []
  for (const hash of cold.slice(0, 100)) {
    const started = performance.now()
    await read(`/Transactions('${hash}')`)
    coldTimes.push(performance.now() - started)
  }
  printLine(`cold miss Transactions('<hash>') (${coldTimes.length} distinct hashes)`, figures(coldTimes))

  const contested = cold[cold.length - 1]
  devnet.resetRequestCounts()
  await Promise.all(Array.from({ length: 100 }, () => read(`/Transactions('${contested}')`)))
  const upstreamCalls = devnet.requestCount(`/txs/${contested}/utxos`)
  printValue('upstream calls for 100 concurrent misses of one key', `${upstreamCalls} (${devnet.requestCount(`/txs/${contested}`)} HTTP requests: tx, utxos, metadata)`)

  const remote = Math.min(rounds, 200)
  console.log(`\n  with the devnet answering after ${REMOTE_LATENCY_MS} ms, like a remote Blockfrost (${remote} samples)`)
  devnet.setLatency(REMOTE_LATENCY_MS)
  const remoteService = await sample(remote, () => read(`/Transactions('${warm}')`))
  const remoteDirect = await sample(remote, () => direct.txs(warm))
  printLine(`warm Transactions('<hash>') through the service`, remoteService)
  printLine('same read directly with blockfrost-js', remoteDirect)
  printRatio('service / direct', remoteService, remoteDirect)
  const remoteCold: number[] = []
  for (const hash of cold.slice(100, 140)) {
    const started = performance.now()
    await read(`/Transactions('${hash}')`)
    remoteCold.push(performance.now() - started)
  }
  printLine(`cold miss Transactions('<hash>') (${remoteCold.length} distinct hashes)`, figures(remoteCold))
  devnet.setLatency(0)
  console.log()
}

/** Blockfrost's typical answer time seen from a server nearby. */
const REMOTE_LATENCY_MS = 50

/** Grows the chain until it holds at least `count` transactions; answers their hashes. */
export function grow(devnet: ChainADevnet, count: number): string[] {
  const hashes: string[] = []
  while (hashes.length < count) {
    const event = devnet.activity.round()
    devnet.produceBlock()
    if (event.txHash) hashes.push(event.txHash)
  }
  return hashes
}

/** A read of the chain-A read service as a self-hosted user (the in-process run's mocked alice); anything but 200 throws. */
export function readServiceReader(url: string): (path: string) => Promise<unknown> {
  const service = `${url}/odata/v4/chaina-odata`
  const headers = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') }
  return async (path: string) => {
    const response = await fetch(service + path, { headers })
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
    return response.json()
  }
}
