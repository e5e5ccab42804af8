import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { DevnetStateError } from './state.ts'

/** Listens on the port (0: a free one) and host; answers the base URL a client reaches it at. */
export async function listen(server: http.Server, port: number | undefined, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port ?? 0, host, () => resolve())
  })
  return `http://${reachableHost(host)}:${(server.address() as AddressInfo).port}`
}

const reachableHost = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host)

/** Ends open connections and stops listening. */
export async function closeServer(server: http.Server): Promise<void> {
  if (!server.listening) return
  server.closeAllConnections()
  await new Promise<void>(resolve => server.close(() => resolve()))
}

/** Produces a block every `blockTimeMs` (none when 0) without holding the process open; answers the stop. */
export function startBlockProducer(blockTimeMs: number, produce: () => void, chain: string): () => void {
  if (blockTimeMs <= 0) return () => {}
  const timer = setInterval(() => {
    try {
      produce()
    } catch (error) {
      console.error(`[${chain} devnet] block production failed:`, error)
    }
  }, blockTimeMs)
  timer.unref()
  return () => clearInterval(timer)
}

interface Stoppable {
  stop(): Promise<void>
}

/**
 * The one devnet a process embeds as a chain's upstream: started once, on a free loopback port,
 * stopped at shutdown. A saved chain that cannot be resumed ends a server's start with its
 * one-line message, not a stack.
 */
export function embedding<Config, Devnet extends Stoppable>(start: (config: Config) => Promise<Devnet>) {
  let running: Devnet | undefined
  const refuseToStart = (error: unknown): never => {
    if (error instanceof DevnetStateError && typeof (globalThis as { test?: unknown }).test !== 'function') {
      console.error(error.message)
      process.exit(1)
    }
    throw error
  }
  return {
    async start(config: Config): Promise<Devnet> {
      if (running) return running
      running = await start(config).catch(refuseToStart)
      return running
    },
    async stop(): Promise<void> {
      const stopping = running
      running = undefined
      await stopping?.stop()
    },
    current: (): Devnet | undefined => running,
  }
}
