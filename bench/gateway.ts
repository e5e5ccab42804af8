import { spawn, type ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { printLine, printRatio, printValue, type Figures } from './measure.ts'

/**
 * The hosted gateway: the same warm read through the gateway and with the gateway off (two server
 * processes, each on its own SQLite file), and charged calls per second on one key and across 100
 * keys, on SQLite and on PostgreSQL. Servers and the load generator are separate processes.
 */

export interface Server {
  url: string
  transaction: string
  keys: { id: string; key: string }[]
  process: ChildProcess
}

export interface Load extends Figures {
  ok: number
  other: number
  perSecond: number
}

const root = join(__dirname_(), '..')

export async function gatewayBenchmarks({ seconds }: { seconds: number }) {
  const directory = mkdtempSync(join(tmpdir(), 'bench-gateway-'))
  const quiet = { DEVNET_BLOCK_TIME_MS: '0', DEVNET_ACTIVITY: 'false', GATEWAY_RATE_PER_SECOND: '1000000000', GATEWAY_BURST: '1000000000', GATEWAY_MAX_CALLS_IN_FLIGHT: '1000000000' }
  try {
    console.log('hosted gateway (server and load generator in separate processes)')
    const on = await startServer({ ...quiet, GATEWAY_ENABLED: 'true', BENCH_KEYS: '100', cds_requires_db_credentials_url: join(directory, 'on.sqlite') })
    const off = await startServer({ ...quiet, GATEWAY_ENABLED: 'false', cds_requires_db_credentials_url: join(directory, 'off.sqlite') })
    try {
      const read = (server: Server) => `${server.url}/odata/v4/chaina-odata/Transactions('${server.transaction}')`
      const withKey = (key: string) => ({ authorization: `Bearer ${key}` })
      const alice = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') }
      await load(read(on), [withKey(on.keys[0].key)], 1, 1)
      await load(read(off), [alice], 1, 1)
      const through = await load(read(on), [withKey(on.keys[0].key)], seconds, 1)
      const without = await load(read(off), [alice], seconds, 1)
      printLine('warm Transactions(<hash>) through the gateway (1 client)', through)
      printLine('same read with the gateway off', without)
      printRatio('gateway / off (targets: p50 ≤ 1.05, p99 ≤ 1.15)', through, without)
      await throughput('SQLite', on, read(on), seconds)
      const offRate = await load(read(off), [alice], seconds, 32)
      printValue('same read with the gateway off, 32 clients (the ceiling)', `${offRate.perSecond.toFixed(0)}/s`)
    } finally {
      on.process.kill()
      off.process.kill()
    }

    execFileSync(process.execPath, [join(root, 'db', 'deploy.js')], { cwd: root, env: { ...process.env, CDS_ENV: 'pg', NODE_ENV: 'test' }, stdio: 'ignore' })
    const pg = await startServer({ ...quiet, GATEWAY_ENABLED: 'true', BENCH_KEYS: '100', CDS_ENV: 'pg', NODE_ENV: 'test' })
    try {
      await throughput('PostgreSQL', pg, `${pg.url}/odata/v4/chaina-odata/Transactions('${pg.transaction}')`, seconds)
    } finally {
      pg.process.kill()
    }
    const pgOff = await startServer({ ...quiet, GATEWAY_ENABLED: 'false', CDS_ENV: 'pg', NODE_ENV: 'test' })
    try {
      const alice = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') }
      const ceiling = await load(`${pgOff.url}/odata/v4/chaina-odata/Transactions('${pgOff.transaction}')`, [alice], seconds, 32)
      printValue('same read with the gateway off, 32 clients (PostgreSQL ceiling)', `${ceiling.perSecond.toFixed(0)}/s`)
    } finally {
      pgOff.process.kill()
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
  console.log()
}

async function throughput(database: string, server: Server, url: string, seconds: number) {
  const oneKey = await load(url, [{ authorization: `Bearer ${server.keys[0].key}` }], seconds, 32)
  const manyKeys = await load(url, server.keys.map(({ key }) => ({ authorization: `Bearer ${key}` })), seconds, 32)
  printValue(`charged calls per second, one key, 32 clients (${database})`, `${oneKey.perSecond.toFixed(0)}/s  (p50 ${oneKey.p50.toFixed(1)} ms, p99 ${oneKey.p99.toFixed(1)} ms, ${oneKey.other} not 200)`)
  printValue(`charged calls per second, 100 keys, 32 clients (${database})`, `${manyKeys.perSecond.toFixed(0)}/s  (p50 ${manyKeys.p50.toFixed(1)} ms, p99 ${manyKeys.p99.toFixed(1)} ms, ${manyKeys.other} not 200)`)
}

export function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [join(root, 'bench', 'server.ts')], {
    cwd: root,
    env: { ...withoutTestEnv(process.env), CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error('a benchmark server did not start:\n' + output)), 60_000)
    const watch = (chunk: Buffer) => {
      output += chunk
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

function load(url: string, headers: Record<string, string>[], seconds: number, clients: number): Promise<Load> {
  const job = JSON.stringify({ url, headers, seconds, clients })
  const output = execFileSync(process.execPath, [join(root, 'bench', 'load.ts'), job], { cwd: root, env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' }, maxBuffer: 1 << 20 })
  return JSON.parse(output.toString())
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
