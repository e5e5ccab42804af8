import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** A server started as its own process (with its children), answering once it listens. */
export interface RunningServer {
  url: string
  /** The server's process id (the command's own process; its children have their own). */
  pid: number
  /** Signals the process group, children included (SIGTERM unless told otherwise). */
  stop(signal?: NodeJS.Signals): void
  /** Whether the process is still running. */
  running(): boolean
  /** Whether any process of its group (npm, its shell, the server) is still running. */
  groupRunning(): boolean
  /** Resolves with the exit code (or the signal) once the process has exited. */
  exited: Promise<number | string | null>
  /** What the process wrote to stdout and stderr: everything up to listening, then its latest part. */
  output(): string
}

const OUTPUT_TAIL = 256 * 1024

/**
 * The checkout's own server, run from its root other than in production, reads the compiled model
 * the suite keeps (test/setup/compiled-model.ts) instead of compiling it again: a couple of seconds of
 * CPU per server on a busy machine. Production starts, and built artefacts, compile as they always do.
 * (This file also runs as an ES module, outside jest: hence the root is the server's working folder.)
 */
function withTheKeptModel(command: string, options: { cwd: string; env: NodeJS.ProcessEnv }): NodeJS.ProcessEnv {
  const keptModel = join(options.cwd, 'test', 'setup', 'compiled-model.ts')
  const checkoutServer = command === join(options.cwd, 'node_modules', '.bin', 'cds-serve') && existsSync(keptModel)
  if (!checkoutServer || options.env.NODE_ENV === 'production') return options.env
  return { ...options.env, NODE_OPTIONS: [options.env.NODE_OPTIONS, `--import ${keptModel}`].filter(Boolean).join(' ') }
}

export function startServer(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunningServer> {
  const child = spawn(command, args, { cwd: options.cwd, env: withTheKeptModel(command, options), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const signalGroup = (signal: NodeJS.Signals | 0) => {
    try {
      process.kill(-child.pid!, signal)
      return true
    } catch {
      return false
    }
  }
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.pid) signalGroup(signal)
  }
  const groupRunning = () => !!child.pid && signalGroup(0)
  const exited = new Promise<number | string | null>(resolve => child.on('exit', (code, signal) => resolve(code ?? signal)))
  return new Promise((resolve, reject) => {
    let output = ''
    /** What it wrote up to listening, kept whole; `output` is what came after. */
    let head: string | undefined
    const timer = setTimeout(() => {
      stop()
      reject(new Error(`${command} ${args.join(' ')} did not listen in time:\n${output}`))
    }, options.timeoutMs ?? 45_000)
    const watch = (chunk: Buffer) => {
      output += chunk
      if (head !== undefined) {
        if (output.length > 2 * OUTPUT_TAIL) output = output.slice(-OUTPUT_TAIL)
        return
      }
      const match = /server listening on \{ url: '([^']+)'/.exec(output)
      if (match) {
        head = output
        output = ''
        clearTimeout(timer)
        const running = () => child.exitCode === null && child.signalCode === null
        resolve({ url: match[1], pid: child.pid!, stop, running, groupRunning, exited, output: () => head + output })
      }
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', watch)
    child.on('exit', code => {
      clearTimeout(timer)
      reject(new Error(`${command} exited with ${code}:\n${head ?? ''}${output}`))
    })
  })
}

/**
 * Stops a server and waits until every process of its group has ended (npm ends at once; the
 * server after its shutdown, within its grace period), so nothing writes into its folder anymore.
 * A group still running after `graceMs` is killed.
 */
export async function stopAndWait(server: RunningServer, graceMs = 15_000): Promise<void> {
  server.stop()
  await server.exited
  const deadline = Date.now() + graceMs
  while (server.groupRunning() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  if (server.groupRunning()) server.stop('SIGKILL')
}
