import cds from '@sap/cds'
import type { ServerResponse } from 'node:http'
import type { KeyRecord } from './accounts.ts'
import { refusal, setUnits, UNITS_CHARGED, UNITS_LEFT, withUnitsLeft, type Answer } from './answers.ts'
import { expiredKey, INVALID_KEY } from './key-check.ts'
import * as ledger from './ledger.ts'
import { loadPrices } from './prices.ts'
import { holdResponse } from './response-hold.ts'
import { scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { recordCharge, recordRefund, reservationsVoided } from '../metrics/instruments.ts'
import { routeFamily } from '../metrics/route-family.ts'
import { cutAtGraceEnd } from '../lib/graceful-stop.ts'
import { UnitLeases, type Lease, type LeaseConfig } from './leases.ts'

/**
 * Units around a metered call: reserve the price before the call is handled, then, before the
 * answer leaves, commit the charge (success) or refund it (4xx/5xx, or no answer within the
 * timeout: 504), and say both in the units headers. A busy key's call draws its price on a unit
 * lease instead, in memory (leases.ts). A sweeper voids reservations and leases a crashed process
 * left pending. The units themselves move only in ledger.ts.
 */

/** Prices change in the database (a deployment, an operator): each instance reads them again this often. */
const PRICE_REFRESH_MS = 5000
/**
 * A product sets this header when it answers a repeated request with what the first one made (the
 * same idempotency key and payload): that answer costs nothing, the first call was charged.
 */
const IDEMPOTENT_REPLAY = 'x-idempotent-replay'
const SHUTDOWN_FLUSH_MS = 3000
/** A call still running when the instance's shutdown grace ends (srv/lib/graceful-stop.ts). */
const STOPPED_BEFORE_ANSWER = refusal(503, 'SHUTTING_DOWN', 'This instance stopped before the call was answered; its units are refunded: send it again', {}, { connection: 'close', 'retry-after': 5 })
/** The ledger stores the route of a call cut to this length (its column's size). */
const ROUTE_LENGTH = 500

interface MeteringConfig extends LeaseConfig {
  timeoutMs: number
  reservationTimeoutS: number
  sweepIntervalS: number
}

export interface MeteredCall {
  key: KeyRecord
  routeClass: string
  method: string
  path: string
  requestId: string
}

/** Units set aside for a call: reserved in the database, or drawn on a lease of this instance. */
export interface ReservedUnits {
  units: number
  unitsLeft: number
  lease?: Lease
}

type Reserved =
  | ({ ok: true } & ReservedUnits)
  /** The key changed since it was read (a grant revoked, say): read it again and retry once. */
  | { ok: false; stale: true }
  | { ok: false; stale: false; answer: Answer }

export class Metering {
  private readonly config: MeteringConfig
  private prices = new Map<string, number>()
  private readonly jobs: ScheduledJob[] = []
  readonly leases: UnitLeases

  constructor(config: MeteringConfig) {
    this.config = config
    this.leases = new UnitLeases(config)
  }

  /** Loads the prices, then keeps them fresh and starts the sweeper. */
  async start() {
    this.prices = await loadPrices()
    this.leases.start()
    this.jobs.push(
      scheduleJob('reloading prices', PRICE_REFRESH_MS, () => this.reloadPrices()),
      scheduleJob('voiding reservations left pending', this.config.sweepIntervalS * 1000, () => this.sweep()),
    )
  }

  /**
   * Stops the background work and writes the waiting commits, for a few seconds at most: a database
   * that does not answer must not keep the process from ending (the sweeper settles what is left).
   */
  async stop() {
    const stopped = Promise.all([...this.jobs.splice(0).map(job => job.stop()), ledger.flushCommits(), this.leases.stop()])
    await Promise.race([stopped, new Promise(resolve => setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref())])
  }

  /** How long a metered call may take before it is answered 504 and refunded. */
  get timeoutMs() {
    return this.config.timeoutMs
  }

  /** The units a route class costs, or the answer refusing a class without a price. */
  priceOf(call: MeteredCall): number | Answer {
    const units = this.prices.get(call.routeClass)
    if (units !== undefined) return units
    const unpriced = refusal(403, 'ROUTE_NOT_PRICED', `No price is set for ${call.routeClass}; the call is not forwarded`)
    return withUnitsLeft(unpriced, call.key.unitsLeft)
  }

  /**
   * Sets the call's units aside: on the key's lease in this instance when it has one, else in one
   * guarded write (the key must still be as it was read, and hold enough units). A call that finds
   * too few units asks the key's leases back and tries once more.
   */
  async reserve(call: MeteredCall, units: number): Promise<Reserved> {
    const { key } = call
    const lease = this.leases.draw(key, units)
    if (lease) return { ok: true, units, unitsLeft: lease.unitsLeft, lease }
    const reserveInDatabase = () => ledger.reserve({
      keyId: key.ID, secretHash: key.secretHash, version: key.version, units, routeClass: call.routeClass, route: boundedRoute(call), routeFamily: routeFamily(call.path), requestId: call.requestId,
    })
    let reservation = await reserveInDatabase()
    if (!reservation.ok && reservation.reason === 'insufficient' && (await this.leases.makeRoom(key.ID))) reservation = await reserveInDatabase()
    if (reservation.ok) {
      this.leases.consider(key, units, reservation.unitsLeft)
      return { ok: true, units, unitsLeft: remember(key, reservation.unitsLeft) }
    }
    switch (reservation.reason) {
      case 'stale':
        return { ok: false, stale: true }
      case 'insufficient': {
        const left = remember(key, reservation.unitsLeft)
        const exhausted = refusal(402, 'UNITS_EXHAUSTED', `This call costs ${units} units (${call.routeClass}); ${left} are left`, { price: units, unitsLeft: left, routeClass: call.routeClass })
        return { ok: false, stale: false, answer: withUnitsLeft(exhausted, left) }
      }
      case 'expired':
        return { ok: false, stale: false, answer: expiredKey() }
      case 'invalid':
        return { ok: false, stale: false, answer: INVALID_KEY }
    }
  }

  /**
   * Resolves the reservation before the answer leaves: an error answer is refunded (written before
   * it leaves), a success committed soon after. A call not answered in time is answered 504 at once
   * and refunded right after: the refund must not wait for the handler, which may hold the database.
   * Should the process die in between, the sweeper refunds.
   */
  settleOnAnswer(res: ServerResponse, call: MeteredCall, reserved: ReservedUnits) {
    const { requestId, key } = call
    const { units, unitsLeft, lease } = reserved
    if (lease) return this.settleOnLease(res, call, reserved, lease)
    const held = holdResponse(res, async status => {
      clearTimeout(timer)
      const replay = res.getHeader(IDEMPOTENT_REPLAY) === 'true'
      if (status >= 400 || replay) {
        const left = await refundOrRetry(requestId, replay ? 'replay' : String(status))
        setUnits(res, 0, remember(key, left ?? unitsLeft + units))
        if (left !== undefined) recordRefund(call.routeClass, replay ? 'replay' : 'error', units)
      } else {
        setUnits(res, units, unitsLeft)
        ledger.commitSoon(requestId, String(status))
        recordCharge(call.routeClass, units)
      }
    })
    /** Answers the call itself, unless the handler started answering, and refunds it. */
    const cutOff = (answer: Answer, outcome: 'timeout' | 'shutdown'): Promise<void> | undefined => {
      clearTimeout(timer)
      if (!held.takeOver()) return undefined
      held.send(answer.status, { 'content-type': 'application/json', [UNITS_CHARGED]: 0, [UNITS_LEFT]: unitsLeft + units, ...answer.headers }, JSON.stringify(answer.body))
      return refundOrRetry(requestId, outcome).then(left => {
        if (left !== undefined) recordRefund(call.routeClass, outcome, units)
      })
    }
    const timer = setTimeout(() => {
      void cutOff(refusal(504, 'UPSTREAM_TIMEOUT', `The call was not answered within ${this.config.timeoutMs} ms; its units are refunded`), 'timeout')
    }, this.config.timeoutMs)
    cutAtGraceEnd(res, () => cutOff(STOPPED_BEFORE_ANSWER, 'shutdown'))
  }

  /**
   * The same for a call drawn on a lease, without the database: a served call's charge is written
   * with the lease's next batch; any other outcome puts its units back on the lease.
   */
  private settleOnLease(res: ServerResponse, call: MeteredCall, { units, unitsLeft }: ReservedUnits, lease: Lease) {
    let settled = false
    const notServed = (outcome: 'replay' | 'error' | 'timeout' | 'shutdown') => {
      settled = true
      this.leases.notServed(lease, units)
      recordRefund(call.routeClass, outcome, units)
    }
    const held = holdResponse(res, status => {
      clearTimeout(timer)
      if (settled) return
      const replay = res.getHeader(IDEMPOTENT_REPLAY) === 'true'
      if (status >= 400 || replay) {
        notServed(replay ? 'replay' : 'error')
        setUnits(res, 0, lease.unitsLeft)
        return
      }
      settled = true
      setUnits(res, units, unitsLeft)
      this.leases.served(lease, { units, routeClass: call.routeClass, route: boundedRoute(call), routeFamily: routeFamily(call.path), requestId: call.requestId, outcome: String(status), at: new Date().toISOString() })
      recordCharge(call.routeClass, units)
    })
    const cutOff = (answer: Answer, outcome: 'timeout' | 'shutdown') => {
      clearTimeout(timer)
      if (!held.takeOver()) return undefined
      held.send(answer.status, { 'content-type': 'application/json', [UNITS_CHARGED]: 0, [UNITS_LEFT]: unitsLeft + units, ...answer.headers }, JSON.stringify(answer.body))
      notServed(outcome)
      return undefined
    }
    const timer = setTimeout(() => {
      cutOff(refusal(504, 'UPSTREAM_TIMEOUT', `The call was not answered within ${this.config.timeoutMs} ms; its units are refunded`), 'timeout')
    }, this.config.timeoutMs)
    cutAtGraceEnd(res, () => cutOff(STOPPED_BEFORE_ANSWER, 'shutdown'))
  }

  // A failed run is the schedule's to log, once per change of state (srv/lib/failure-streak.ts).
  private async reloadPrices() {
    this.prices = await loadPrices()
  }

  private async sweep() {
    const voided = await ledger.sweep(this.config.reservationTimeoutS)
    reservationsVoided.inc(voided)
    if (voided) cds.log('gateway').warn(`voided ${voided} reservations left pending longer than ${this.config.reservationTimeoutS} s`)
    const leases = await ledger.sweepLeases(this.config.reservationTimeoutS)
    if (leases) cds.log('gateway').warn(`voided ${leases} unit leases not renewed for ${this.config.reservationTimeoutS} s (their holder stopped); their undrawn units are back`)
  }
}

/** Waits before each further attempt at a refund the database did not take at once. */
const REFUND_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 16000]

/**
 * Refunds a call's reservation at once. When the database cannot take it (away, or its pool
 * exhausted), the answer still leaves (uncharged: the units are the caller's), the failure is
 * logged once, and the refund is tried again in the background; should every attempt fail, the
 * sweeper voids the reservation. Refunding is idempotent (only a pending charge is refunded).
 */
async function refundOrRetry(requestId: string, outcome: string): Promise<number | undefined> {
  try {
    return await ledger.refund(requestId, outcome)
  } catch (error) {
    cds.log('gateway').warn(`could not refund call ${requestId} at once (${(error as Error).message}); retrying, else the sweeper voids its reservation`)
    void retryRefund(requestId, outcome)
    return undefined
  }
}

async function retryRefund(requestId: string, outcome: string) {
  for (const delay of REFUND_RETRY_DELAYS_MS) {
    await new Promise(resolve => setTimeout(resolve, delay).unref())
    try {
      await ledger.refund(requestId, outcome)
      return
    } catch {
      // Logged once above; the next attempt, or the sweeper, follows.
    }
  }
}

/** The key keeps the balance this instance saw last, for answers that do not ask the database (a 429). */
function remember(key: KeyRecord, unitsLeft: number): number {
  key.unitsLeft = unitsLeft
  return unitsLeft
}

/** `METHOD /path` as the ledger stores it: at most ROUTE_LENGTH characters. */
function boundedRoute({ method, path }: MeteredCall): string {
  const route = `${method} ${path}`
  return route.length <= ROUTE_LENGTH ? route : route.slice(0, ROUTE_LENGTH - 1) + '…'
}
