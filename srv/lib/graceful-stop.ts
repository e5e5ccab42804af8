import cds from '@sap/cds'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { sendError } from './http-safety.ts'
import { isStopping, markStopping } from './lifecycle.ts'
import { requiresOptions, type Environment, type Tree } from './requires-options.ts'

/**
 * A stop signal (SIGTERM, SIGINT, SIGHUP) ends the process in order, so that no call is cut off
 * without an answer and nothing is left for another instance to wait for:
 * 1. at once: the process is stopping (the readiness probe fails), new requests answer 503
 *    SHUTTING_DOWN with `Connection: close` and `Retry-After` (the probes still answer), idle
 *    keep-alive connections are closed;
 * 2. the calls in flight finish, for up to the grace (SHUTDOWN_GRACE_MS), each answer closing its
 *    connection;
 * 3. whatever still runs then is answered 503 SHUTTING_DOWN (the gateway refunds its units, and
 *    the refund is written before the process goes on);
 * 4. the stop steps (`onStop`): background jobs stop, leases are handed back, waiting commits are
 *    written, while the database is still there;
 * 5. CAP's own shutdown (its signal listener: every 'shutdown' listener, the database closed,
 *    server.close()), which ends the process.
 * The process ends HAND_BACK_MS after the grace at the latest, whatever still waits.
 */

const STOP_ENVIRONMENT: Environment = { SHUTDOWN_GRACE_MS: 'shutdownGraceMs' }
const options = requiresOptions('request-pipeline', STOP_ENVIRONMENT, { named: 'variable' })

/** How long calls in flight may take after a stop signal (SHUTDOWN_GRACE_MS, default 40000: longer than the gateway's 30 s call timeout). */
export function shutdownGraceMs(requires?: Tree, env?: NodeJS.ProcessEnv): number {
  return options.reader(options.options(requires, env)).positiveWhole('shutdownGraceMs', 40_000)
}

/** Time for the stop steps and CAP's shutdown after the grace, before the process ends regardless. */
export const HAND_BACK_MS = 3000
/** What a refused request's Retry-After says: another instance (or this one restarted) answers by then. */
const RETRY_AFTER_S = 5
/** The probes answer while the process stops: the readiness probe says that it does. */
const ANSWERED_WHILE_STOPPING = new Set(['/health', '/ready'])

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

// ---- calls in flight ---------------------------------------------------------------------------

const inFlight = new Set<ServerResponse>()
let whenDrained: (() => void) | undefined

/** How a part answers its call itself when the grace ends (the gateway: 503 and a refund); undefined when its answer is leaving already. */
type Cut = () => Promise<void> | undefined
const cuts = new Map<ServerResponse, Cut>()

const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?')[0]

/**
 * Bootstrap middleware, first after the request id: while the process stops, a new request answers
 * 503 SHUTTING_DOWN (with `headers`: the gateway's units header); before that, the request counts
 * as a call in flight until its answer has left.
 */
export function refuseWhileStopping(headers: Record<string, string | number> = {}) {
  return function countCallsInFlight(req: IncomingMessage, res: ServerResponse, next: () => void) {
    if (isStopping() && !ANSWERED_WHILE_STOPPING.has(pathOf(req)))
      return sendError(res, 503, 'SHUTTING_DOWN', 'This instance is stopping and takes no new requests; send the request again', { ...headers, connection: 'close', 'retry-after': RETRY_AFTER_S })
    inFlight.add(res)
    if (isStopping()) closeAfterAnswer(res)
    res.once('close', () => {
      inFlight.delete(res)
      cuts.delete(res)
      if (!inFlight.size) whenDrained?.()
    })
    next()
  }
}

/** How the call answering on `res` is answered when the grace ends: `cut` answers it (and settles what it holds). */
export function cutAtGraceEnd(res: ServerResponse, cut: Cut) {
  cuts.set(res, cut)
}

/** The answer closes its connection: a keep-alive client sends its next request elsewhere. */
function closeAfterAnswer(res: ServerResponse) {
  if (!res.headersSent) res.setHeader('connection', 'close')
}

/** Resolves once no call is in flight, or after `ms`. */
function drained(ms: number): Promise<void> {
  if (!inFlight.size) return Promise.resolve()
  return new Promise(resolve => {
    const timer = setTimeout(resolve, ms)
    whenDrained = () => {
      clearTimeout(timer)
      resolve()
    }
  })
}

/** Answers every call still in flight: its part's own cut, else 503 here (a handler's later output is dropped). */
async function cutWhatRemains(graceMs: number): Promise<void> {
  const left = [...inFlight]
  if (!left.length) return
  cds.log('server').warn(`${left.length} call(s) still running ${graceMs} ms after the stop signal: answered 503 SHUTTING_DOWN (metered ones refunded)`)
  await Promise.allSettled(left.map(res => (cuts.has(res) ? cuts.get(res)!() : answerNow(res))))
}

function answerNow(res: ServerResponse) {
  // An answer under way cannot be replaced; the connection ends with the process.
  if (res.headersSent) return
  sendError(res, 503, 'SHUTTING_DOWN', 'This instance stopped before the call was answered; send it again', { connection: 'close', 'retry-after': RETRY_AFTER_S })
  res.writeHead = (() => res) as unknown as ServerResponse['writeHead']
  res.write = (() => true) as ServerResponse['write']
  res.end = (() => res) as ServerResponse['end']
}

// ---- stop steps --------------------------------------------------------------------------------

const stopSteps = new Set<() => Promise<unknown>>()

/**
 * Registers a part's stop (its background work ends, its leases are handed back): run after the
 * calls in flight are answered and before the database closes; on 'shutdown' too (in-process
 * servers, tests). Runs once however often it is asked.
 */
export function onStop(step: () => unknown) {
  let once: Promise<unknown> | undefined
  const run = () => (once ??= Promise.resolve().then(step))
  stopSteps.add(run)
  cds.on('shutdown', run)
}

async function runStopSteps(): Promise<void> {
  const results = await Promise.allSettled([...stopSteps].map(step => step()))
  for (const result of results) if (result.status === 'rejected') cds.log('server').warn('a stop step failed', result.reason)
}

// ---- the signals -------------------------------------------------------------------------------

/**
 * Once the server listens: each stop signal runs the steps above, then CAP's own listener of that
 * signal, which this takes over. `cds serve` registers its listeners before it announces
 * 'listening' or, when the server listens already, just after: those are taken over now, these
 * in the same turn, before a signal can reach them. Reached by a signal on its own, CAP's listener
 * stops every part and closes the database at the same time: a job still running then waited for
 * a connection that never came, and the process never ended. A repeated signal changes nothing.
 */
export function stopGracefullyOnSignals(server: Server) {
  // Under jest, jest ends the process.
  if (typeof (globalThis as { test?: unknown }).test === 'function') return
  // Read now: a malformed setting fails the start, not the stop.
  const graceMs = shutdownGraceMs()
  const takeOver = signalsTakenOver(server, graceMs)
  takeOver()
  // 'newListener' comes before the listener is added; the microtask runs once it is, still in this turn.
  process.on('newListener', (event: string | symbol) => {
    if ((SIGNALS as readonly (string | symbol)[]).includes(event)) queueMicrotask(takeOver)
  })
}

/** A function that makes this module the only listener of the stop signals, keeping the others to call once the steps are done. */
function signalsTakenOver(server: Server, graceMs: number): () => void {
  let started = false
  const ours = new Map<string, () => void>()
  const capShutdown = new Map<string, NodeJS.SignalsListener[]>(SIGNALS.map(signal => [signal, []]))
  const onSignal = (signal: string) => () => {
    if (started) return
    started = true
    stop(server, graceMs, signal, capShutdown.get(signal)!).catch(error => {
      cds.log('server').error('stopping failed; ending the process', error)
      process.exit(1)
    })
  }
  return () => {
    for (const signal of SIGNALS) {
      const others = process.listeners(signal).filter(listener => listener !== ours.get(signal))
      for (const listener of others) process.removeListener(signal, listener)
      capShutdown.get(signal)!.push(...others)
      if (!ours.has(signal)) {
        ours.set(signal, onSignal(signal))
        process.on(signal, ours.get(signal)!)
      }
    }
  }
}

async function stop(server: Server, graceMs: number, signal: string, capShutdown: NodeJS.SignalsListener[]) {
  markStopping()
  const log = cds.log('server')
  log.info(`${signal}: stopping; new requests answer 503 SHUTTING_DOWN; ${inFlight.size} call(s) in flight get up to ${graceMs} ms`)
  setTimeout(() => {
    log.warn(`stopping after ${signal} did not finish within ${graceMs + HAND_BACK_MS} ms; ending the process`)
    process.exit(0)
  }, graceMs + HAND_BACK_MS).unref()
  for (const res of inFlight) closeAfterAnswer(res)
  server.closeIdleConnections()
  await drained(graceMs)
  await cutWhatRemains(graceMs)
  await runStopSteps()
  for (const listener of capShutdown) listener(signal as NodeJS.Signals)
}
