/**
 * A load generator, run as a child process so it does not share the server's event loop. Arguments
 * come as one JSON object: { url or urls, headers: [..one headers object per client or one for all],
 * seconds, clients }. Several urls (one per instance) take the calls in turn, a round-robin as a
 * simple load balancer does. Prints one JSON line: { ok, other, calls, perSecond, statuses, p50, p99 },
 * statuses counting the answers other than 200 by status and error code.
 */
interface Job {
  url?: string
  urls?: string[]
  headers: Record<string, string>[]
  seconds: number
  clients: number
}

async function main() {
  const job: Job = JSON.parse(process.argv[2])
  const latencies: number[] = []
  let ok = 0
  let other = 0
  const statuses: Record<string, number> = {}
  const urls = job.urls ?? [job.url!]
  let next = 0
  const end = Date.now() + job.seconds * 1000
  await Promise.all(Array.from({ length: job.clients }, async (_, client) => {
    let call = client
    while (Date.now() < end) {
      const headers = job.headers[call++ % job.headers.length]
      const started = performance.now()
      const response = await fetch(urls[next++ % urls.length], { headers })
      const body = await response.text()
      latencies.push(performance.now() - started)
      if (response.status === 200) ok++
      else {
        other++
        const code = `${response.status} ${response.headers.get('x-error-code') ?? codeOf(body)}`.trim()
        statuses[code] = (statuses[code] ?? 0) + 1
      }
    }
  }))
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  process.stdout.write(JSON.stringify({ ok, other, calls: ok + other, perSecond: ok / job.seconds, statuses, p50: at(0.5), p99: at(0.99) }) + '\n')
}

/** The error code of an answer other than 200 (OData's error.code), to tell refusals apart. */
function codeOf(body: string): string {
  try {
    return String(JSON.parse(body)?.error?.code ?? '')
  } catch {
    return ''
  }
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
