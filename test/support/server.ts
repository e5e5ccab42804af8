import { spawn } from 'node:child_process'

/** A server started as its own process (with its children), answering once it listens. */
export interface RunningServer {
  url: string
  stop(): void
}

export function startServer(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunningServer> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const stop = () => {
    if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM')
  }
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => {
      stop()
      reject(new Error(`${command} ${args.join(' ')} did not listen in time:\n${output}`))
    }, options.timeoutMs ?? 45_000)
    const watch = (chunk: Buffer) => {
      output += chunk
      const listening = /server listening on \{ url: '([^']+)'/.exec(output)
      if (listening) {
        clearTimeout(timer)
        resolve({ url: listening[1], stop })
      }
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', watch)
    child.on('exit', code => {
      clearTimeout(timer)
      reject(new Error(`${command} exited with ${code}:\n${output}`))
    })
  })
}
