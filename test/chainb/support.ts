import cds from '@sap/cds'
import { spawn } from 'node:child_process'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { IndexerClient } from '../../srv/chains/chain-b/indexer-client.ts'
import type ChainBAdapterService from '../../srv/chains/chain-b/service.ts'
import type { ChainBService } from '../../srv/chainb/service.ts'
import { produceBlocks, runningChainB } from '../support/chain-b.ts'
import { startServer, type RunningServer } from '../support/server.ts'

/**
 * Chain B for the service's tests: the application's own chain-b service, talking over HTTP to the
 * devnet the application embedded (blocks on request only, through test/support/chain-b.ts).
 */

/** The application's chain-b service (the indexer client, the attester keys, the sponsor). */
export const chainBAdapter = () => cds.services['chain-b'] as unknown as ChainBAdapterService

/** The devnet's ledger, to look at what reached the chain. */
export const ledger = () => runningChainB().ledger

export const produce = (n = 1) => produceBlocks(n)

/** The devnet's HTTP server (ChainBDevnet keeps it private; tests close and reopen it). */
const httpServerOf = () => (runningChainB() as unknown as { server: Server }).server

/**
 * Takes the devnet off the network: its HTTP server stops listening and drops its HTTP connections,
 * so every call of the adapter is refused (503 CHAIN_B_UNAVAILABLE) while the chain itself stays as
 * it is. Answers a function that listens again on the same port. The server's own 'close' listeners
 * (which end its WebSocket server for good) are held back meanwhile: this is an outage, not a stop.
 */
export async function chainDown(): Promise<() => Promise<void>> {
  const server = httpServerOf()
  const { port, address } = server.address() as AddressInfo
  const onClose = server.listeners('close') as ((...args: unknown[]) => void)[]
  server.removeAllListeners('close')
  server.close()
  server.closeAllConnections()
  return () => new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, address, () => {
      server.off('error', reject)
      for (const listener of onClose) server.on('close', listener)
      resolve()
    })
  })
}

/** Runs `work` while the devnet is off the network, and brings it back whatever happens. */
export async function whileChainDown<T>(work: () => Promise<T>): Promise<T> {
  const up = await chainDown()
  try {
    return await work()
  } finally {
    await up()
  }
}

export const chainbService = () => cds.services.ChainBService as unknown as ChainBService

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

export const randomHash = () => cds.utils.uuid().replace(/-/g, '') + cds.utils.uuid().replace(/-/g, '')

export const CHAINB = '/odata/v4/chainb'

export const as = (username: string) => ({ auth: { username, password: '' } })

/** A caller that is a chain-B product grant (x-agent-token): owner `grant:<id>`, its own attester. */
export async function grantCaller() {
  const { issueGrant } = await import('../../srv/gateway/accounts.ts')
  const grant = await issueGrant({ product: 'chain-b' })
  return { id: grant.id, owner: `grant:${grant.id}`, config: { headers: { 'x-agent-token': grant.token } } }
}

// ---- several processes: a standalone chain-B devnet (the CLI) and spawned app servers ----

export const ROOT = join(__dirname, '..', '..')
export const onPostgres = () => (process.env.CDS_ENV ?? '').split(',').map(profile => profile.trim()).includes('pg')

/** A standalone chain-B devnet process: `devnet/cli.ts --chain b serve`, blocks on request, chain in memory. */
export interface StandaloneChainB {
  url: string
  indexerUrl: string
  /** The indexer API as the application reads it (the adapter itself). */
  client: IndexerClient
  produce(count?: number): Promise<{ tipHeight: number; mempool: number }>
  status(): Promise<{ tipHeight: number; mempool: number; vaultAddress: string }>
  /** SIGSTOP / SIGCONT: the process stops answering (connections hang until the adapter's timeout), then goes on. */
  pause(): void
  resume(): void
  stop(): Promise<void>
  output(): string
}

export function startStandaloneChainB(): Promise<StandaloneChainB> {
  const child = spawn(process.execPath, ['devnet/cli.ts', '--chain', 'b', 'serve'], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', CHAIN_B_DEVNET_BLOCK_TIME_MS: '0', CHAIN_B_DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_STATE_DIR: 'none', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
  })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  let output = ''
  let started = false
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the chain-B devnet did not start:\n${output}`)), 20_000)
    child.once('exit', code => { clearTimeout(timer); reject(new Error(`the chain-B devnet exited with ${code}:\n${output}`)) })
    const watch = (chunk: Buffer) => {
      output += chunk
      const match = /(http:\/\/[^\s]+)\/api\/v4\/graphql/.exec(output)
      if (!match || started) return
      started = true
      clearTimeout(timer)
      const url = match[1]
      const indexerUrl = `${url}/api/v4/graphql`
      const control = async (method: string, path: string, body?: object) => {
        const response = await fetch(`${url}/api/v4/devnet/${path}`, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) })
        if (!response.ok) throw new Error(`devnet ${path}: HTTP ${response.status} ${await response.text()}`)
        return response.json()
      }
      resolve({
        url, indexerUrl,
        client: new IndexerClient({ indexerUrl, indexerWsUrl: `${indexerUrl}/ws`, submitUrl: `${url}/api/v4/submit`, timeoutMs: 5000 }),
        produce: (count = 1) => control('POST', 'blocks', { count }),
        status: () => control('GET', 'status'),
        pause: () => process.kill(-child.pid!, 'SIGSTOP'),
        resume: () => process.kill(-child.pid!, 'SIGCONT'),
        stop: async () => {
          try {
            process.kill(-child.pid!, 'SIGCONT')
            process.kill(-child.pid!, 'SIGTERM')
          } catch {
            return
          }
          await exited
        },
        output: () => output,
      })
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', chunk => { output += chunk })
  })
}

/**
 * An application server process (`cds-serve`, the test profile, gateway off, the caller a mocked
 * user) whose chain B is the standalone devnet, with the job runner on and short runner settings.
 * On PostgreSQL it uses this test file's database (CDS_REQUIRES_DB_CREDENTIALS_DATABASE, set by
 * test/setup/database.ts and inherited).
 */
export function startAppServer(devnet: StandaloneChainB, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  return startServer(join(ROOT, 'node_modules', '.bin', 'cds-serve'), [], {
    cwd: ROOT,
    env: {
      ...process.env, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', GATEWAY_ENABLED: 'false',
      CHAIN_B_NETWORK: 'devnet', CHAIN_B_INDEXER_URL: devnet.indexerUrl, CHAIN_B_CRAWLER_ENABLED: 'false',
      CHAIN_B_JOBS_RUNNER: 'true', CHAIN_B_JOBS_POLL_MS: '25', CHAIN_B_JOBS_RETRY_MS: '100', CHAIN_B_JOBS_LEASE_MS: '1500', CHAIN_B_TIMEOUT_MS: '1000',
      ...env,
    },
  })
}

/** A mocked user's call of a server's chain-B API over HTTP. */
export async function callAs(user: string, url: string, method: 'GET' | 'POST', path: string, body?: object) {
  const response = await fetch(`${url}${CHAINB}/${path}`, {
    method, body: body && JSON.stringify(body),
    headers: { authorization: `Basic ${Buffer.from(`${user}:`).toString('base64')}`, 'content-type': 'application/json' },
  })
  return { status: response.status, data: await response.json() }
}

/** The vault calls in the devnet's blocks (every block from 1 to the tip): transaction hashes. */
export async function vaultCallsOn(devnet: StandaloneChainB): Promise<string[]> {
  const { tipHeight, vaultAddress } = await devnet.status()
  const hashes: string[] = []
  for (let height = 1; height <= tipHeight; height++) {
    const block = await devnet.client.block({ height })
    for (const tx of block!.transactions) if (tx.contractActions.some(action => action.address === vaultAddress)) hashes.push(tx.hash)
  }
  return hashes
}
