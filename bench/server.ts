/**
 * A server for the gateway benchmarks, run as a child process: the application with the gateway on
 * or off (GATEWAY_ENABLED), BENCH_KEYS keys issued in-process, and a chain deep enough that its
 * first transaction is final (its reads never go upstream). Prints one line once listening:
 * `BENCH_SERVER { url, devnet, transaction, keys: [{ id, key }] }`.
 *
 * A further instance on the same database runs without its own devnet (CHAIN_A_DEVNET=false,
 * BLOCKFROST_URL=<the first one's devnet>) and reads the transaction named in BENCH_TRANSACTION.
 * BENCH_COUNT_STATEMENTS=<file>: counts the database statements by kind; each SIGUSR2 writes the
 * counts since the last one to that file (JSON) and starts again from zero.
 */
import cds from '@sap/cds'
import { renameSync, writeFileSync } from 'node:fs'

async function main() {
  ;(cds as any).log('odata', 'warn')
  ;(cds as any).log('cds', 'warn')
  ;(cds as any).log('deploy', 'warn')
  const { url } = await (cds as any).exec('--in-memory?', '--port', '0')
  ;(cds as any).log('chain-a', 'warn')
  if (process.env.BENCH_COUNT_STATEMENTS) countStatements(process.env.BENCH_COUNT_STATEMENTS)
  const { embeddedDevnet } = await import('../devnet/chain-a/embedded.ts')
  const { issueKey } = await import('../srv/gateway/accounts.ts')
  const devnet = embeddedDevnet()
  if (devnet) for (let i = 0; i < 12; i++) devnet.produceBlock()
  const transaction = devnet?.ledger.blocks[0].txs[0] ?? process.env.BENCH_TRANSACTION
  if (!transaction) throw new Error('a server without its own devnet reads the transaction named in BENCH_TRANSACTION')
  const keys = []
  for (let i = 0; i < Number(process.env.BENCH_KEYS ?? 0); i++) {
    const { id, key } = await issueKey({ units: 1_000_000_000, plan: 'scale' })
    keys.push({ id, key })
  }
  if (process.env.BENCH_PROFILE) await profileUntilInterrupted(process.env.BENCH_PROFILE)
  process.stdout.write('BENCH_SERVER ' + JSON.stringify({ url, devnet: devnet?.url, transaction, keys }) + '\n')
}

/** CPU profile of the serving phase only (startup excluded), written on SIGINT. */
async function profileUntilInterrupted(file: string) {
  const { Session } = await import('node:inspector/promises')
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

/**
 * Counts every statement the database service executes (prepared statements' runs and plain
 * `exec`s such as BEGIN and COMMIT), by kind: its verb and first table. Transactions inherit the
 * service's methods, so wrapping the service counts theirs too.
 */
function countStatements(file: string) {
  // By text while serving, classified only when written: a profile taken meanwhile sees little of the counting.
  let counts = new Map<string, number>()
  const count = (sql: string) => counts.set(sql, (counts.get(sql) ?? 0) + 1)
  const db = cds.db as any
  const { prepare, exec } = db
  db.prepare = function (this: any, sql: string) {
    const counted = (statement: any) => Object.fromEntries(Object.entries(statement).map(([name, method]: [string, any]) =>
      [name, typeof method === 'function' ? (...args: unknown[]) => (count(sql), method(...args)) : method]))
    const statement = prepare.call(this, sql)
    return typeof statement?.then === 'function' ? statement.then(counted) : counted(statement)
  }
  db.exec = function (this: any, sql: string) {
    count(sql)
    return exec.call(this, sql)
  }
  process.on('SIGUSR2', () => {
    const byKind: Record<string, number> = {}
    for (const [sql, n] of counts) byKind[kindOf(sql)] = (byKind[kindOf(sql)] ?? 0) + n
    counts = new Map()
    // Whole or not at all: the bench reads the file as soon as it exists.
    writeFileSync(file + '.part', JSON.stringify(byKind))
    renameSync(file + '.part', file)
  })
}

/** `UPDATE gateway_ApiKeys`, `SELECT chaina_…`, `BEGIN`: enough to tell the statements of a call apart. */
function kindOf(sql: string): string {
  const text = String(sql).replace(/\s+/g, ' ').trim()
  const verb = /^(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?'
  if (verb === 'WITH') {
    const inner = text.replace(/^WITH (RECURSIVE )?"?\w+"? AS \(\s*/i, '')
    return inner === text ? 'WITH' : `WITH … ${kindOf(inner)}`
  }
  const table = /(?:\bFROM|^UPDATE|\bINTO)\s+"?([\w.$]+)"?/i.exec(text)?.[1]
  if (verb === 'SELECT' && /set_config/.test(text)) return 'SELECT set_config (session variables)'
  return table ? `${verb} ${table}` : verb
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
