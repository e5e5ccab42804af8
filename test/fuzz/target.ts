import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { startServer, type RunningServer } from '../support/server.ts'
import { send, type Answer, type Probe } from './http.ts'

/**
 * The server under attack: one `npm start` process at a time, with an API key issued on the
 * command line against the same database. Every exchange says whether it was answered, whether
 * the process died of it, or what else went wrong; a dead server can be started again on the same
 * database (the key and its ledger stay).
 */

const run = promisify(execFile)

export type Outcome =
  | { kind: 'answer'; answer: Answer }
  | { kind: 'died'; log: string }
  | { kind: 'error'; error: string }
  | { kind: 'unsent'; error: string }

export interface TargetOptions {
  root: string
  env: NodeJS.ProcessEnv
  units: number
  restarts: number
}

/** An answer that went through the gateway's metering: its request id and what it charged. */
export interface Metered {
  requestId: string
  charged: number
  status: number
  /** Which start of the server answered it. */
  generation: number
}

export class Target {
  readonly options: TargetOptions
  url = ''
  /** The API key issued for the run, and its id. */
  key = ''
  keyId = ''
  /** The output of the first start, which names the served services. */
  startLog = ''
  restartsLeft: number
  /** Counts the starts of the server. */
  generation = 0
  /** Every answer that carried a request id, with what it charged. */
  readonly metered: Metered[] = []
  chargedTotal = 0
  /** The starts of the server whose process died. */
  readonly died = new Set<number>()
  /** The starts of the server that stopped answering and were stopped by the suite. */
  readonly hung = new Set<number>()
  private server: RunningServer | undefined
  private stopping = false

  constructor(options: TargetOptions) {
    this.options = options
    this.restartsLeft = options.restarts
  }

  /** Starts the server (`npm start` generates the typed models and deploys a SQLite file), then issues the key. */
  async start() {
    await this.launch()
    const issued = await this.cli('gateway', 'keys', 'issue', '--units', String(this.options.units), '--label', 'fuzz')
    this.key = /(cag_[A-Za-z0-9_-]{49})/.exec(issued)![1]
    this.keyId = /id ([0-9a-f-]{36})/.exec(issued)![1]
    this.startLog = this.server!.output()
  }

  /** `npm run -s <script> -- …` against the same database and settings as the server. */
  async cli(script: string, ...args: string[]): Promise<string> {
    return (await run('npm', ['run', '-s', script, '--', ...args], { cwd: this.options.root, env: this.options.env, maxBuffer: 16 * 1024 * 1024 })).stdout
  }

  running(): boolean {
    return !!this.server?.running()
  }

  output(): string {
    return this.server?.output() ?? ''
  }

  async exchange(probe: Probe): Promise<Outcome> {
    const result = await send(this.url, this.key, probe)
    if ('answer' in result) {
      this.record(result.answer)
      if (this.stopping) return { kind: 'died', log: 'stopped by the suite' }
      if (result.answer.status >= 400 && this.shuttingDown()) return this.dying()
      return { kind: 'answer', answer: result.answer }
    }
    if (result.unsent) return { kind: 'unsent', error: result.error }
    if (this.stopping) return { kind: 'died', log: 'stopped by the suite' }
    if ((await this.exitsWithin(1500)) || this.shuttingDown()) return this.dying()
    return { kind: 'error', error: result.error }
  }

  /** The process logged an uncaught error and is shutting down (it may still answer for a while). */
  private shuttingDown(): boolean {
    return /Uncaught|server shutdown/.test(this.output())
  }

  /** The process is dying of an error: give it a moment to exit, then end it. */
  private async dying(): Promise<Outcome> {
    this.died.add(this.generation)
    if (!(await this.exitsWithin(3000))) await this.end()
    return { kind: 'died', log: crashExcerpt(this.output(), this.options.root) }
  }

  /** Whether calls that need the database are still answered (GET /me within a few seconds). */
  async responsive(): Promise<boolean> {
    const result = await send(this.url, this.key, { name: 'GET /me', group: 'health', kinds: [], method: 'GET', target: '/me', timeoutMs: 3000 })
    return 'answer' in result && result.answer.status === 200
  }

  /** Stops a server that stopped answering; `restart` starts it again. */
  async stopHung() {
    this.hung.add(this.generation)
    this.stopping = true
    await this.end()
  }

  /** Starts the server again after it died or hung; false when no restart is left (unless forced). */
  async restart(force = false): Promise<boolean> {
    if (this.restartsLeft <= 0 && !force) return false
    this.restartsLeft--
    await this.end()
    await this.launch()
    this.stopping = false
    return true
  }

  /** Ends every process of the server: politely, then for good; resolves once none is left. */
  async end() {
    const server = this.server
    if (!server) return
    server.stop()
    for (let waited = 0; server.groupRunning(); waited += 100) {
      if (waited === 3000) server.stop('SIGKILL')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }

  /** Whether this start of the server ended without shutting down (died, or hung and stopped). */
  ended(generation: number): boolean {
    return this.died.has(generation) || this.hung.has(generation)
  }

  private async launch() {
    this.server = await startServer('npm', ['start'], { cwd: this.options.root, env: this.options.env, timeoutMs: 60_000 })
    this.url = this.server.url
    this.generation++
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    const server = this.server!
    let timer: NodeJS.Timeout | undefined
    await Promise.race([server.exited, new Promise(resolve => (timer = setTimeout(resolve, ms)))])
    clearTimeout(timer)
    return !server.running()
  }

  private record(answer: Answer) {
    const charged = Number(answer.headers['x-access-units-charged'] ?? 0) || 0
    this.chargedTotal += charged
    const requestId = answer.headers['x-request-id']
    if (requestId) this.metered.push({ requestId, charged, status: answer.status, generation: this.generation })
  }
}

/** The error the process died of, as its log tells it: message and first frame in the project. */
export function crashExcerpt(log: string, root: string): string {
  const relative = (text: string) => text.split(`file://${root}/`).join('').split(`${root}/`).join('')
  const uncaught = [...log.matchAll(/Uncaught ([^\n]*)\n((?:[ \t]+at [^\n]*\n?)*)/g)].pop()
  if (uncaught) {
    const frames = uncaught[2].split('\n').map(line => line.trim()).filter(Boolean)
    const frame = frames.find(line => line.includes('/srv/')) ?? frames[0] ?? ''
    return relative(`${uncaught[1]} ${frame}`.trim())
  }
  const lines = log.split('\n').map(line => line.trim()).filter(line => line && !/^\[odata\] - (GET|POST|PUT|PATCH|DELETE)/.test(line))
  return relative(lines.slice(-3).join(' | ')).slice(0, 400)
}
