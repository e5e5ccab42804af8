import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { ChainADevnet } from '../devnet/chain-a/index.ts'
import { startDevnet } from '../test/support/devnet.ts'
import { startServer, stopAndWait, type RunningServer } from '../test/support/server.ts'
import { administer, onPostgres, quoted } from '../test/setup/postgres.ts'
import { FaultProxy } from './proxy.ts'
import { LedgerReader } from './ledger-reader.ts'

/**
 * What the fault harness runs: both devnets, a fault proxy in front of each one's upstream API,
 * gateway instances (`cds-serve` processes on PORT=0) sharing one database of their own (a SQLite
 * file, or a PostgreSQL database), and API keys issued on it.
 */

/** The project's folder (jest compiles to CommonJS, which has __dirname; the npm scripts run from it). */
export const ROOT = typeof __dirname === 'string' ? join(__dirname, '..') : process.cwd()

/** Time-outs short enough that a fault resolves within a phase of a few seconds. */
export const TIMINGS = {
  /** The servers' upstream time-out (chain A and chain B). */
  upstreamTimeoutMs: 1500,
  /** How long the proxy's `slow` mode holds a request: beyond the upstream time-out. */
  slowMs: 3000,
  /** The gateway's call time-out (504, refunded). */
  gatewayTimeoutMs: 5000,
  /** Reservations left pending are voided after this (GATEWAY_RESERVATION_TIMEOUT_S), swept every GATEWAY_SWEEP_INTERVAL_S. */
  reservationTimeoutS: 8,
  sweepIntervalS: 1,
}

interface Stoppable {
  url: string
  stop(): Promise<void>
}

export interface Instance {
  server: RunningServer
  url: string
  pid: number
}

export interface ClusterOptions {
  instances: number
  keys: number
  /** Units each key starts with. */
  units?: number
  log?: (line: string) => void
}

export class Cluster {
  instances: Instance[] = []
  /** The keys the load mix uses. */
  keys: { id: string; key: string }[] = []
  /** A key only the calls cut off by the SIGKILL use, so their reservations can be told apart. */
  victimKey = { id: '', key: '' }
  readonly chainA: ChainADevnet
  readonly proxyA: FaultProxy
  readonly proxyB: FaultProxy
  readonly database: Database
  readonly env: NodeJS.ProcessEnv
  readonly ledger: LedgerReader
  private readonly chainB: Stoppable
  private readonly log: (line: string) => void

  private constructor(parts: { chainA: ChainADevnet; chainB: Stoppable; proxyA: FaultProxy; proxyB: FaultProxy; database: Database; env: NodeJS.ProcessEnv; ledger: LedgerReader; log: (line: string) => void }) {
    this.chainA = parts.chainA
    this.chainB = parts.chainB
    this.proxyA = parts.proxyA
    this.proxyB = parts.proxyB
    this.database = parts.database
    this.env = parts.env
    this.ledger = parts.ledger
    this.log = parts.log
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const log = options.log ?? (() => undefined)
    const cleanups: (() => Promise<void>)[] = []
    try {
      log('starting the devnets and the fault proxies')
      const chainA = await startDevnet({ seed: 'fault-harness', wallets: 3 })
      cleanups.push(() => chainA.stop())
      const chainB = await startChainBDevnet()
      cleanups.push(() => chainB.stop())
      const proxyA = await FaultProxy.start(chainA.url, { slowMs: TIMINGS.slowMs })
      cleanups.push(() => proxyA.stop())
      const indexerUrl = `${chainB.url}/api/v4/graphql`
      const proxyB = await FaultProxy.start(chainB.url, { slowMs: TIMINGS.slowMs })
      cleanups.push(() => proxyB.stop())
      log(`preparing a database of its own (${onPostgres() ? 'PostgreSQL' : 'SQLite'})`)
      const database = await Database.create()
      cleanups.push(() => database.remove())
      const env: NodeJS.ProcessEnv = {
        ...process.env, ...database.env, NODE_ENV: 'test', PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
        GATEWAY_ENABLED: 'true', GATEWAY_PUBLIC_URL: 'https://gateway.faults.test',
        GATEWAY_TIMEOUT_MS: String(TIMINGS.gatewayTimeoutMs),
        GATEWAY_RESERVATION_TIMEOUT_S: String(TIMINGS.reservationTimeoutS), GATEWAY_SWEEP_INTERVAL_S: String(TIMINGS.sweepIntervalS),
        GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000', GATEWAY_MAX_CALLS_IN_FLIGHT: '1000',
        // Unit leases as deployed (the test profile turns them off): busy keys draw on leases through every fault.
        GATEWAY_LEASE_SECONDS: '1',
        CHAIN_A_DEVNET: 'false', CHAIN_A_NETWORK: 'devnet', BLOCKFROST_URL: proxyA.url, CHAIN_A_TIMEOUT_MS: String(TIMINGS.upstreamTimeoutMs), CHAIN_A_RETRIES: '0',
        CHAIN_A_TTL_ADDRESS: '0', CHAIN_A_TTL_TIP: '0', CHAIN_A_FOLLOWER_ENABLED: 'false',
        CHAIN_B_NETWORK: 'devnet', CHAIN_B_DEVNET: 'false', CHAIN_B_INDEXER_URL: proxyB.proxied(indexerUrl), CHAIN_B_INDEXER_WS_URL: `${indexerUrl.replace(/^http/, 'ws')}/ws`,
        CHAIN_B_SUBMIT_URL: `${chainB.url}/api/v4/submit`, CHAIN_B_TIMEOUT_MS: String(TIMINGS.upstreamTimeoutMs), CHAIN_B_CRAWLER_ENABLED: 'false',
        CHAIN_B_JOBS_RUNNER: 'true', CHAIN_B_JOBS_RETRY_MS: '500', CHAIN_B_JOBS_LEASE_MS: '5000',
        ANALYTICS_WRITER_ENABLED: 'false',
      }
      const cluster = new Cluster({ chainA, chainB, proxyA, proxyB, database, env, ledger: await LedgerReader.open(database), log })
      cleanups.push(() => cluster.stopInstances())
      // One after the other: the first creates the SQLite file's schema.
      for (let i = 0; i < options.instances; i++) cluster.instances.push(await cluster.startInstance(i))
      log(`issuing ${options.keys} keys`)
      const keys = await Promise.all(Array.from({ length: options.keys + 1 }, () => cluster.issueKey(options.units ?? 100_000_000)))
      cluster.victimKey = keys.pop()!
      cluster.keys = keys
      return cluster
    } catch (error) {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
      throw error
    }
  }

  async startInstance(index: number): Promise<Instance> {
    this.log(`starting instance ${index + 1}`)
    const server = await startServer(join(ROOT, 'node_modules', '.bin', 'cds-serve'), [], { cwd: ROOT, env: this.env, timeoutMs: 180_000 })
    return { server, url: server.url, pid: server.pid }
  }

  /** Kills an instance's processes at once (no shutdown: what a crash or an OOM kill does) and starts it again. */
  async killAndRestart(index: number, whenKilled: () => void = () => undefined): Promise<void> {
    const { server } = this.instances[index]
    this.log(`SIGKILL to instance ${index + 1} (pid ${server.pid})`)
    server.stop('SIGKILL')
    await server.exited
    whenKilled()
    this.instances[index] = await this.startInstance(index)
  }

  /** The last lines each instance logged with an error in them (the output a restarted instance had is gone with it). */
  errorLines(count = 20): string[][] {
    return this.instances.map(({ server }) => server.output().split('\n').filter(line => /error/i.test(line)).slice(-count))
  }

  /** Stops an instance (SIGTERM, SIGKILL after a grace) and starts it again. */
  async restart(index: number): Promise<void> {
    this.log(`restarting instance ${index + 1}, which did not serve again`)
    await stopAndWait(this.instances[index].server, 10_000)
    this.instances[index] = await this.startInstance(index)
  }

  /** A key issued by the operator's command line on the instances' database; its id read back by the key's hash. */
  private async issueKey(units: number): Promise<{ id: string; key: string }> {
    const args = ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', String(units), '--plan', 'scale', '--quiet']
    const { stdout } = await promisify(execFile)('npm', args, { cwd: ROOT, env: this.env })
    const key = stdout.trim().split('\n').pop()!
    const id = await this.ledger.keyIdOf(createHash('sha256').update(key).digest('hex'))
    if (!id) throw new Error(`the issued key ${key.slice(0, 8)}… is not in the database`)
    return { id, key }
  }

  private async stopInstances() {
    for (const { server } of this.instances) if (server.groupRunning()) await stopAndWait(server)
  }

  async stop() {
    await this.stopInstances()
    await this.ledger.close()
    await this.proxyA.stop()
    await this.proxyB.stop()
    await this.chainB.stop()
    await this.chainA.stop()
    await this.database.remove()
  }
}

/** The instances' database: a SQLite file in a folder of its own, or a PostgreSQL database with the schema deployed. */
export class Database {
  readonly env: NodeJS.ProcessEnv
  readonly postgresName: string | undefined
  readonly sqliteFile: string | undefined
  readonly remove: () => Promise<void>

  private constructor(env: NodeJS.ProcessEnv, postgresName: string | undefined, sqliteFile: string | undefined, remove: () => Promise<void>) {
    this.env = env
    this.postgresName = postgresName
    this.sqliteFile = sqliteFile
    this.remove = remove
  }

  static async create(): Promise<Database> {
    if (!onPostgres()) {
      const folder = mkdtempSync(join(tmpdir(), 'cag-faults-'))
      const file = join(folder, 'faults.sqlite')
      return new Database({ CDS_REQUIRES_DB_CREDENTIALS_URL: file }, undefined, file, async () => rmSync(folder, { recursive: true, force: true }))
    }
    // Named like the test runs' databases (cag_test_<pid>…), so a run that was killed has its database dropped by the next one.
    const name = `cag_test_${process.pid}_faults_${Date.now().toString(36)}`
    const template = process.env.CAG_TEST_TEMPLATE
    await administer(template ? `CREATE DATABASE ${quoted(name)} TEMPLATE ${quoted(template)}` : `CREATE DATABASE ${quoted(name)}`)
    const env = { CDS_REQUIRES_DB_CREDENTIALS_DATABASE: name }
    if (!template) await promisify(execFile)(process.execPath, [join(ROOT, 'db', 'deploy.js')], { cwd: ROOT, env: { ...process.env, NODE_ENV: 'test', ...env } })
    const remove = async () => void await administer(`DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`)
    return new Database(env, name, undefined, remove)
  }

  /** Takes the database away: new connections are refused and every open one is ended (PostgreSQL only). */
  async takeAway() {
    const name = this.postgresName!
    await administer(`ALTER DATABASE ${quoted(name)} ALLOW_CONNECTIONS false`, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`)
  }

  async giveBack() {
    await administer(`ALTER DATABASE ${quoted(this.postgresName!)} ALLOW_CONNECTIONS true`)
  }
}

/** The chain-B devnet in a process of its own (blocks on request, in memory), as `npm run devnet -- --chain b` serves it. */
function startChainBDevnet(): Promise<Stoppable> {
  const child = spawn(process.execPath, ['devnet/cli.ts', '--chain', 'b', 'serve'], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, PORT: '0', HOST: '127.0.0.1', CHAIN_B_DEVNET_BLOCK_TIME_MS: '1000', CHAIN_B_DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_STATE_DIR: 'none',
      NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    },
  })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const stop = async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      return
    }
    await exited
  }
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => void stop().then(() => reject(new Error(`the chain-B devnet did not start:\n${output}`))), 60_000)
    child.once('exit', code => {
      clearTimeout(timer)
      reject(new Error(`the chain-B devnet exited with ${code}:\n${output}`))
    })
    const watch = (chunk: Buffer) => {
      output += chunk
      const match = /(http:\/\/[^\s]+)\/api\/v4\/graphql/.exec(output)
      if (!match) return
      child.stdout!.off('data', watch)
      child.stderr!.off('data', watch)
      child.stdout!.resume()
      child.stderr!.resume()
      clearTimeout(timer)
      resolve({ url: match[1], stop })
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', watch)
  })
}
