import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { administer, quoted } from '../test/setup/postgres.ts'
import { printLine, printRatio, printValue, type Figures } from './measure.ts'

/**
 * The hosted gateway: the same warm read through the gateway and with the gateway off (two server
 * processes, each on its own SQLite file), and charged calls per second on one key and across 100
 * keys on SQLite; then 1, 2 and 3 instances on one PostgreSQL database behind a round-robin, charged
 * calls next to the same read with the gateway off on as many instances (the ceiling). Servers and
 * the load generator are separate processes.
 */

export interface Server {
  url: string
  devnet?: string
  transaction: string
  keys: { id: string; key: string }[]
  process: ChildProcess
}

export interface Load extends Figures {
  ok: number
  other: number
  calls: number
  perSecond: number
  /** Answers other than 200, by status and error code. */
  statuses: Record<string, number>
}

const root = join(__dirname_(), '..')
const CLIENTS = 32
const INSTANCES = [1, 2, 3]
/** No devnet blocks of its own; rate limits and admission control lifted, so the figures tell the cost of serving. */
export const QUIET = { DEVNET_BLOCK_TIME_MS: '0', DEVNET_ACTIVITY: 'false', GATEWAY_RATE_PER_SECOND: '1000000000', GATEWAY_BURST: '1000000000', GATEWAY_MAX_CALLS_IN_FLIGHT: '1000000000', GATEWAY_MAX_INSTANCE_CALLS: '0' }
export const ALICE = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') }
export const withKey = (key: string) => ({ authorization: `Bearer ${key}` })
export const readOf = (server: Server) => `${server.url}/odata/v4/chaina-odata/Transactions('${server.transaction}')`

export async function gatewayBenchmarks({ seconds }: { seconds: number }) {
  console.log('hosted gateway (servers and load generator in separate processes)')
  await onSqlite(seconds)
  await onPostgres(seconds)
  console.log()
}

async function onSqlite(seconds: number) {
  const directory = mkdtempSync(join(tmpdir(), 'bench-gateway-'))
  try {
    progress('starting a server with the gateway and one without (SQLite files)')
    const [on, off] = await Promise.all([
      startServer({ ...QUIET, GATEWAY_ENABLED: 'true', BENCH_KEYS: '100', cds_requires_db_credentials_url: join(directory, 'on.sqlite') }),
      startServer({ ...QUIET, GATEWAY_ENABLED: 'false', cds_requires_db_credentials_url: join(directory, 'off.sqlite') }),
    ])
    try {
      await load([readOf(on)], [withKey(on.keys[0].key)], 1, 1)
      await load([readOf(off)], [ALICE], 1, 1)
      progress('warm read, 1 client, through the gateway and with it off')
      const through = await load([readOf(on)], [withKey(on.keys[0].key)], seconds, 1)
      const without = await load([readOf(off)], [ALICE], seconds, 1)
      printLine('warm Transactions(<hash>) through the gateway (1 client)', through)
      printLine('same read with the gateway off', without)
      printRatio('gateway / off (targets: p50 ≤ 1.05, p99 ≤ 1.15)', through, without)
      progress(`charged calls, ${CLIENTS} clients, one key then 100 keys, and the ceiling (SQLite)`)
      const oneKey = await load([readOf(on)], [withKey(on.keys[0].key)], seconds, CLIENTS)
      const manyKeys = await load([readOf(on)], on.keys.map(({ key }) => withKey(key)), seconds, CLIENTS)
      const ceiling = await load([readOf(off)], [ALICE], seconds, CLIENTS)
      printValue(`charged calls per second, one key, ${CLIENTS} clients (SQLite)`, rate(oneKey, ceiling))
      printValue(`charged calls per second, 100 keys, ${CLIENTS} clients (SQLite)`, rate(manyKeys, ceiling))
      printValue(`same read with the gateway off, ${CLIENTS} clients (the ceiling)`, rate(ceiling))
    } finally {
      on.process.kill()
      off.process.kill()
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

/** 1, 2 and 3 instances on one PostgreSQL database: charged (one key, 100 keys) next to the ceiling. */
async function onPostgres(seconds: number) {
  const database = await BenchDatabase.create()
  try {
    const max = Math.max(...INSTANCES)
    progress(`starting ${max} gateway instances on one PostgreSQL database (the first serves the devnet to the others)`)
    const on = await startInstances(max, { ...database.env, GATEWAY_ENABLED: 'true' }, { BENCH_KEYS: '100' })
    const charged = new Map<number, { oneKey: Load; manyKeys: Load }>()
    try {
      for (const count of INSTANCES) {
        const urls = on.slice(0, count).map(readOf)
        for (const url of urls) await load([url], [withKey(on[0].keys[0].key)], 0.5, 1)
        progress(`charged calls, ${count} instance(s), ${CLIENTS} clients, one key then 100 keys`)
        const oneKey = await load(urls, [withKey(on[0].keys[0].key)], seconds, CLIENTS)
        const manyKeys = await load(urls, on[0].keys.map(({ key }) => withKey(key)), seconds, CLIENTS)
        charged.set(count, { oneKey, manyKeys })
      }
    } finally {
      await stopAll(on)
    }
    progress(`starting ${max} instances with the gateway off on the same database`)
    const off = await startInstances(max, { ...database.env, GATEWAY_ENABLED: 'false' }, {})
    try {
      for (const count of INSTANCES) {
        const urls = off.slice(0, count).map(readOf)
        for (const url of urls) await load([url], [ALICE], 0.5, 1)
        progress(`the ceiling, ${count} instance(s) with the gateway off, ${CLIENTS} clients`)
        const ceiling = await load(urls, [ALICE], seconds, CLIENTS)
        const { oneKey, manyKeys } = charged.get(count)!
        const instances = `${count} instance${count > 1 ? 's' : ''}`
        printValue(`charged, one key, ${instances}, ${CLIENTS} clients (PostgreSQL)`, rate(oneKey, ceiling))
        printValue(`charged, 100 keys, ${instances}, ${CLIENTS} clients (PostgreSQL)`, rate(manyKeys, ceiling))
        printValue(`gateway off, ${instances}, ${CLIENTS} clients (PostgreSQL ceiling)`, rate(ceiling))
      }
    } finally {
      await stopAll(off)
    }
  } finally {
    await database.remove()
  }
}

/** Calls per second, latencies, answers other than 200, and the share of the ceiling when given. */
function rate(run: Load, ceiling?: Load): string {
  const share = ceiling ? `, ${(run.perSecond / ceiling.perSecond).toFixed(2)} of the ceiling` : ''
  return `${run.perSecond.toFixed(0)}/s  (p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms, ${run.other} not 200${others(run)}${share})`
}

const others = (run: Load) => Object.keys(run.statuses).length ? ': ' + Object.entries(run.statuses).map(([code, count]) => `${count}× ${code}`).join(', ') : ''

/**
 * Instances on one database: the first runs the embedded chain-A devnet (and issues the keys, into
 * the shared database), the others use that devnet as their upstream and read the same transaction.
 */
export async function startInstances(count: number, env: Record<string, string>, firstOnly: Record<string, string>): Promise<Server[]> {
  const first = await startServer({ ...QUIET, ...env, ...firstOnly })
  const upstream = { CHAIN_A_DEVNET: 'false', CHAIN_A_NETWORK: 'devnet', BLOCKFROST_URL: first.devnet!, BENCH_TRANSACTION: first.transaction }
  const others = await Promise.all(Array.from({ length: count - 1 }, () => startServer({ ...QUIET, ...env, ...upstream })))
  return [first, ...others.map(other => ({ ...other, keys: first.keys }))]
}

export async function stopAll(servers: Server[]) {
  await Promise.all(servers.map(({ process: child }) => new Promise<void>(resolve => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill()
  })))
}

/** A PostgreSQL database of the benchmark's own, named like the test runs' (a killed run's is dropped by the next test run). */
export class BenchDatabase {
  readonly env: Record<string, string>
  private readonly name: string

  private constructor(name: string) {
    this.name = name
    this.env = { CDS_ENV: 'pg', NODE_ENV: 'test', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: name }
  }

  static async create(): Promise<BenchDatabase> {
    const database = new BenchDatabase(`cag_test_${process.pid}_bench_${Date.now().toString(36)}`)
    await administer(`CREATE DATABASE ${quoted(database.name)}`)
    await promisify(execFile)(process.execPath, [join(root, 'db', 'deploy.js')], { cwd: root, env: { ...process.env, ...database.env } })
    return database
  }

  async remove() {
    await administer(`DROP DATABASE IF EXISTS ${quoted(this.name)} WITH (FORCE)`)
  }
}

/**
 * A server process. Each keeps its devnets in memory: servers started side by side would otherwise
 * share the development profile's devnet state folders, which one process at a time may use.
 */
export function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [join(root, 'bench', 'server.ts')], {
    cwd: root,
    env: {
      ...withoutTestEnv(process.env), CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', PORT: '0',
      DEVNET_STATE_DIR: 'none', CHAIN_B_DEVNET_STATE_DIR: 'none', ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error('a benchmark server did not start:\n' + output)), 120_000)
    const watch = (chunk: Buffer) => {
      if (output.length < 1 << 20) output += chunk
      const line = /BENCH_SERVER (.*)\n/.exec(output)
      if (line) {
        clearTimeout(timer)
        resolve({ ...JSON.parse(line[1]), process: child })
      }
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', watch)
    child.on('exit', code => reject(new Error(`a benchmark server exited with ${code}:\n${output}`)))
  })
}

/** A load run from a process of its own; several urls take the calls in turn. */
export async function load(urls: string[], headers: Record<string, string>[], seconds: number, clients: number): Promise<Load> {
  const job = JSON.stringify({ urls, headers, seconds, clients })
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'bench', 'load.ts'), job], { cwd: root, env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' }, maxBuffer: 1 << 20 })
  return JSON.parse(stdout)
}

/** What the benchmark is doing, on stderr, so a long run shows its progress beside the figures. */
export function progress(line: string) {
  console.error(`  … ${line}`)
}

/** The benchmark runs on the test profile; the servers choose their own. */
function withoutTestEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env }
  delete copy.NODE_ENV
  delete copy.CDS_ENV
  return copy
}

function __dirname_(): string {
  return process.argv[1] ? join(process.argv[1], '..') : process.cwd()
}
