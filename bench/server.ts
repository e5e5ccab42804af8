/**
 * A server for the gateway benchmarks, run as a child process: the application with the gateway on
 * or off (GATEWAY_ENABLED), BENCH_KEYS keys issued in-process, and a chain deep enough that its
 * first transaction is final (its reads never go upstream). Prints one line once listening:
 * `BENCH_SERVER { url, devnet, transaction, keys: [{ id, key }] }`.
 */
import cds from '@sap/cds'

async function main() {
  ;(cds as any).log('odata', 'warn')
  ;(cds as any).log('cds', 'warn')
  ;(cds as any).log('deploy', 'warn')
  const { url } = await (cds as any).exec('--in-memory?', '--port', '0')
  ;(cds as any).log('chain-a', 'warn')
  const { embeddedDevnet } = await import('../devnet/chain-a/embedded.ts')
  const { issueKey } = await import('../srv/gateway/accounts.ts')
  const devnet = embeddedDevnet()!
  for (let i = 0; i < 12; i++) devnet.produceBlock()
  const transaction = devnet.ledger.blocks[0].txs[0]
  const keys = []
  for (let i = 0; i < Number(process.env.BENCH_KEYS ?? 0); i++) {
    const { id, key } = await issueKey({ units: 1_000_000_000, plan: 'scale' })
    keys.push({ id, key })
  }
  if (process.env.BENCH_PROFILE) await profileUntilInterrupted(process.env.BENCH_PROFILE)
  process.stdout.write('BENCH_SERVER ' + JSON.stringify({ url, devnet: devnet.url, transaction, keys }) + '\n')
}

/** CPU profile of the serving phase only (startup excluded), written on SIGINT. */
async function profileUntilInterrupted(file: string) {
  const { Session } = await import('node:inspector/promises')
  const { writeFileSync } = await import('node:fs')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  process.once('SIGINT', async () => {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(file, JSON.stringify(profile))
    process.exit(0)
  })
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
