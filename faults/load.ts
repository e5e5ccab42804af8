import { randomBytes } from 'node:crypto'

/**
 * The load mix of the fault harness: metered reads on both chains, a few writes, the gateway's own
 * routes and calls with bad keys, from several keys against every instance in turn. Every answer is
 * recorded by status (and by error code for 4xx and 5xx) in the phase it arrived in.
 */

export interface Target {
  /** The instances' base URLs now (an instance restarted gets a new one). */
  urls(): string[]
  keys: { key: string }[]
  /** An address chain A knows (the devnet's wallet). */
  address: string
}

type Kind = 'chain-a read' | 'chain-b read' | 'write' | 'own route' | 'bad key'
/** One turn of the mix: mostly metered reads, one write, own routes and a bad key. */
const MIX: Kind[] = [
  'chain-a read', 'chain-b read', 'chain-a read', 'own route', 'chain-b read', 'chain-a read', 'bad key', 'chain-b read',
  'chain-a read', 'own route', 'chain-b read', 'chain-a read', 'write', 'chain-b read', 'chain-a read', 'chain-b read',
]
const STABLE_CODE = /^[A-Z][A-Z0-9_]+$/
const CLIENT_TIMEOUT_MS = 60_000

export class PhaseStats {
  requests = 0
  /** Answers by status and code: `200`, `503 CHAIN_A_UNAVAILABLE`, `no answer ECONNRESET`. */
  readonly byStatus = new Map<string, number>()
  /** Answers no fault may cause: a 5xx other than 502/503/504, or one without a stable `error.code`. */
  readonly bad5xx = new Map<string, number>()
  /** Requests that got no answer at all, by instance index. */
  readonly unanswered = new Map<number, number>()
  readonly latencies: number[] = []
  /** Requests sent, by kind of the mix. */
  readonly byKind = new Map<string, number>()

  add(map: Map<string, number> | Map<number, number>, key: string | number) {
    ;(map as Map<typeof key, number>).set(key, ((map as Map<typeof key, number>).get(key) ?? 0) + 1)
  }

  /** The latency's quantile q (0..1) in milliseconds. */
  quantile(q: number): number {
    if (!this.latencies.length) return NaN
    const sorted = [...this.latencies].sort((a, b) => a - b)
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  }
}

export class Load {
  stats = new PhaseStats()
  private running = false
  private workers: Promise<void>[] = []
  private turn = 0

  private readonly target: Target
  private readonly concurrency: number

  constructor(target: Target, concurrency: number) {
    this.target = target
    this.concurrency = concurrency
  }

  start() {
    this.running = true
    this.workers = Array.from({ length: this.concurrency }, (_, worker) => this.work(worker))
  }

  /** Stops sending and waits for the answers of what is still in flight. */
  async stop() {
    this.running = false
    await Promise.all(this.workers)
  }

  /** Starts a new phase's figures; answers the last phase's. */
  nextPhase(): PhaseStats {
    const done = this.stats
    this.stats = new PhaseStats()
    return done
  }

  private async work(worker: number) {
    while (this.running) {
      const turn = this.turn++
      const urls = this.target.urls()
      const instance = turn % urls.length
      const { key } = this.target.keys[worker % this.target.keys.length]
      await this.send(instance, urls[instance], MIX[Math.floor(turn / urls.length) % MIX.length], key)
    }
  }

  /** Answers count in the phase they arrive in (the figures of a phase are final once it is over). */
  private async send(instance: number, url: string, kind: Kind, key: string) {
    this.stats.add(this.stats.byKind, kind)
    const started = performance.now()
    try {
      const request = requestOf(kind, this.target.address, key)
      const response = await fetch(url + request.path, { ...request.init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      const text = await response.text()
      this.stats.requests++
      this.stats.latencies.push(performance.now() - started)
      record(this.stats, response.status, text, kind)
    } catch (error) {
      this.stats.requests++
      this.stats.add(this.stats.unanswered, instance)
      this.stats.add(this.stats.byStatus, `no answer ${causeOf(error)}`)
      // A refused connection fails at once: no busy loop against an instance that is down.
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
}

function record(stats: PhaseStats, status: number, text: string, kind: Kind) {
  if (status < 400) return stats.add(stats.byStatus, String(status))
  const code = codeOf(text)
  stats.add(stats.byStatus, `${status} ${code ?? '(no code)'}`)
  if (status >= 500 && (![502, 503, 504].includes(status) || !code || !STABLE_CODE.test(code))) stats.add(stats.bad5xx, `${status} ${code ?? '(no code)'} (${kind})`)
}

function codeOf(text: string): string | undefined {
  try {
    const code = JSON.parse(text)?.error?.code
    return typeof code === 'string' ? code : undefined
  } catch {
    return undefined
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string } })?.cause
  return cause?.code ?? (error as Error)?.name ?? 'error'
}

const hex32 = () => randomBytes(32).toString('hex')
const json = (key: string, body: unknown): RequestInit => ({
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
})

/** A metered read of chain A that goes to the upstream (the harness sets the address cache's TTL to 0). */
export const chainARead = (address: string, key: string) => ({ path: '/odata/v4/chaina-odata/GetAddressByBech32', init: json(key, { address }) })

function requestOf(kind: Kind, address: string, key: string): { path: string; init: RequestInit } {
  const auth = { headers: { authorization: `Bearer ${key}` } }
  switch (kind) {
    case 'chain-a read': return chainARead(address, key)
    // The vault's state is read from the indexer; an unknown payload hash answers 404 after it.
    case 'chain-b read': return { path: `/odata/v4/chainb/getDocument(payloadHash='${hex32()}')`, init: auth }
    case 'write': return { path: '/api/v1/chainb/anchorDocument', init: json(key, { sha256: hex32(), contentType: 'text/plain' }) }
    case 'own route': return { path: '/me', init: auth }
    case 'bad key': return { path: '/odata/v4/chaina-odata/GetAddressByBech32', init: json(`cag_${hex32()}`, { address }) }
  }
}
