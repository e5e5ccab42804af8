/**
 * A load generator, run as a child process so it does not share the server's event loop. Arguments
 * come as one JSON object: { url, headers: [..one headers object per client or one for all],
 * seconds, clients }. Prints one JSON line: { ok, other, perSecond, p50, p99 }.
 */
interface Job {
  url: string
  headers: Record<string, string>[]
  seconds: number
  clients: number
}

async function main() {
  const job: Job = JSON.parse(process.argv[2])
  const latencies: number[] = []
  let ok = 0
  let other = 0
  const end = Date.now() + job.seconds * 1000
  await Promise.all(Array.from({ length: job.clients }, async (_, client) => {
    let call = client
    while (Date.now() < end) {
      const headers = job.headers[call++ % job.headers.length]
      const started = performance.now()
      const response = await fetch(job.url, { headers })
      await response.arrayBuffer()
      latencies.push(performance.now() - started)
      if (response.status === 200) ok++
      else other++
    }
  }))
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  process.stdout.write(JSON.stringify({ ok, other, perSecond: ok / job.seconds, p50: at(0.5), p99: at(0.99) }) + '\n')
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
