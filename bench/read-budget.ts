import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BenchDatabase, startServer, stopAll, type Load, type Server } from './gateway.ts'
import { printLine, printRatio, printValue } from './measure.ts'

/**
 * The read that once stopped the service, sent without pause by one key while another key reads:
 * the reader's latency with and without the attack in the same run (the attack is refused before
 * it runs, so the ratio should stay near 1), and how fast the attack is refused. On SQLite and on
 * PostgreSQL, server and load generators in separate processes.
 */

const root = join(process.argv[1] ? join(process.argv[1], '..') : process.cwd(), '..')
const ATTACK = '/odata/v4/chaina-odata/Blocks?$top=100&$expand=epochInfo($expand=blocks($top=1000;$expand=transactions($expand=inputs,outputs)))'
const BUDGET_VARIANT = '/odata/v4/chaina-odata/Blocks?$top=100&$expand=epochInfo($expand=blocks($top=1000;$expand=transactions))'
const READ = '/odata/v4/chaina-odata/Blocks?$top=5&$expand=transactions($select=hash)'

export async function readBudgetBenchmarks({ seconds }: { seconds: number }) {
  const directory = mkdtempSync(join(tmpdir(), 'bench-read-budget-'))
  const quiet = { DEVNET_BLOCK_TIME_MS: '0', DEVNET_ACTIVITY: 'false', GATEWAY_RATE_PER_SECOND: '1000000000', GATEWAY_BURST: '1000000000', GATEWAY_ENABLED: 'true', BENCH_KEYS: '2' }
  try {
    console.log('one key\'s expand attack against another key\'s reads (server and load generators in separate processes)')
    const sqlite = await startServer({ ...quiet, cds_requires_db_credentials_url: join(directory, 'budget.sqlite') })
    try {
      await underAttack('SQLite', sqlite, seconds)
    } finally {
      sqlite.process.kill()
    }
    const database = await BenchDatabase.create()
    try {
      const pg = await startServer({ ...quiet, ...database.env })
      try {
        await underAttack('PostgreSQL', pg, seconds)
      } finally {
        await stopAll([pg])
      }
    } finally {
      await database.remove()
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
  console.log()
}

async function underAttack(database: string, server: Server, seconds: number) {
  const [reader, attacker] = server.keys.map(({ key }) => [{ authorization: `Bearer ${key}` }])
  await load(server.url + READ, reader, 1, 1)
  const alone = await load(server.url + READ, reader, seconds, 4)
  const [attacked, attack, variant] = await Promise.all([
    load(server.url + READ, reader, seconds, 4),
    load(server.url + ATTACK, attacker, seconds, 4),
    load(server.url + BUDGET_VARIANT, attacker, seconds, 2),
  ])
  printLine(`another key's read, alone (${database}, 4 clients)`, alone)
  printLine(`the same read under the attack (${database})`, attacked)
  printRatio(`under attack / alone (${database})`, attacked, alone)
  printLine(`the attack, refused EXPAND_TOO_DEEP (${database})`, attack)
  printLine(`its 3-level variant, refused ROW_BUDGET_EXCEEDED (${database})`, variant)
  printValue(`attacks refused per second, none answered 200 (${database})`, `${((attack.other + variant.other) / seconds).toFixed(0)}/s, ${attack.ok + variant.ok} answered 200; reads not 200: ${alone.other + attacked.other}`)
}

async function load(url: string, headers: Record<string, string>[], seconds: number, clients: number): Promise<Load> {
  const job = JSON.stringify({ url, headers, seconds, clients })
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'bench', 'load.ts'), job], { cwd: root, env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' }, maxBuffer: 1 << 20 })
  return JSON.parse(stdout)
}
