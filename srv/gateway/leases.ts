import cds from '@sap/cds'
import { LRUCache } from 'lru-cache'
import { ApiKey } from '#cds-models/gateway'
import type { KeyRecord } from './accounts.ts'
import * as ledger from './ledger.ts'
import type { DrawnCharge } from './ledger.ts'
import { scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { outsideRequest } from '../lib/request-work.ts'
import { FailureStreak } from '../lib/failure-streak.ts'

/**
 * Unit leases: a busy key's calls spend units this instance leased from the database, in memory,
 * instead of reserving each call's price there.
 *
 * - A lease is taken by one guarded UPDATE (ledger.takeLease), sized to what the key's calls spend
 *   in `leaseSeconds` at their current rate (at least 8 calls' worth), at most a quarter of its
 *   balance; a key with fewer than `leaseMinBalance` units, or slower than 2 calls a second, gets
 *   none and each of its calls reserves exactly.
 * - A call drawn on a lease takes its price from the lease's unspent units synchronously (no
 *   await, so two calls can never spend the same unit); a failed call puts it back; a served call's
 *   charge is written with others in one transaction every few milliseconds (ledger.drawOnLease).
 * - The lease goes back (ledger.closeLease: its undrawn units return to the key) when it runs out,
 *   when it is idle, at shutdown, when its key changed (revoked, rotated, another plan or grant:
 *   seen by the check every `leaseCheckMs`, which also makes the key be read again), and when
 *   another instance that ran short recalls it.
 * - A holder renews its leases; one that crashed stops, and the sweeper voids its leases: their
 *   undrawn units go back to the keys, and charges it had not written are never charged.
 *
 * For every key at every moment: its balance plus its open leases' undrawn units = its credits
 * minus its charges, and neither is ever below 0.
 */

export interface LeaseConfig {
  leaseSeconds: number
  leaseMinBalance: number
  leaseIdleMs: number
  leaseCheckMs: number
  reservationTimeoutS: number
}

/** A lease takes at most this share of the key's balance, so other instances find units too. */
const LEASE_SHARE = 4
/** A lease holds at least this many calls: fewer are not worth its two transactions. */
const MIN_LEASE_CALLS = 8
/** Calls per second from which a key is busy enough for a lease. */
const MIN_LEASE_RATE = 2
const DRAW_BATCH_MS = 5
/** Waits before writing drawn charges again after the database did not take them. */
const DRAW_RETRY_MS = 1000
/** How long a call that ran short waits for the key's other leases to come back. */
const RECALL_WAIT_MS = 2000
const RECALL_POLL_MS = 25
/** A lease with less than this fraction of its units left is followed by the next one. */
const RENEW_BELOW = 4

/** One lease this instance holds. */
export class Lease {
  readonly id: string
  readonly keyId: string
  readonly version: number
  /** The key's balance outside this lease when it was taken, for the units-left header. */
  readonly balanceBeside: number
  /** Units the lease set aside when it was taken. */
  readonly size: number
  /** Units not yet spent by a call of this instance. */
  unspent: number
  /** Calls drawn on the lease and not yet answered. */
  inFlight = 0
  lastDrawnAt = Date.now()
  /** Served calls whose charges are not yet written. */
  drawn: DrawnCharge[] = []
  /** Set once the lease is being handed back: no call draws on it any more. */
  closing?: Promise<void>
  private answered?: () => void

  constructor(id: string, keyId: string, version: number, units: number, balanceBeside: number) {
    this.id = id
    this.keyId = keyId
    this.version = version
    this.size = units
    this.unspent = units
    this.balanceBeside = balanceBeside
  }

  get unitsLeft() {
    return this.balanceBeside + this.unspent
  }

  /** Running low: the next lease is taken while this one still serves, so calls need not wait for the database. */
  get low() {
    return this.unspent < this.size / RENEW_BELOW
  }

  /** Resolves once no call drawn on the lease is still running. */
  allAnswered(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise(resolve => (this.answered = resolve))
  }

  callAnswered() {
    this.inFlight--
    if (this.inFlight === 0) this.answered?.()
  }
}

const books = new Set<UnitLeases>()

/** Writes every drawn charge now (a charge must be written before it can be refunded later). */
export async function writeDrawnCharges(): Promise<void> {
  await Promise.all([...books].map(book => book.writeDrawn()))
}

export class UnitLeases {
  private readonly config: LeaseConfig
  /** The lease each key's calls draw on. */
  private readonly byKey = new Map<string, Lease>()
  /** Every lease not yet closed: the ones drawn on, and the ones going back (their charges still to write). */
  private readonly held = new Set<Lease>()
  private readonly taking = new Set<string>()
  private readonly rates = new CallRates()
  private readonly recalls = new Map<string, Promise<boolean>>()
  private jobs: ScheduledJob[] = []
  private writing?: Promise<void>
  private writeTimer?: NodeJS.Timeout
  private lastRenewal = Date.now()
  private readonly writeFailures = new FailureStreak('writing charges served on unit leases')
  private stopped = false
  /** Told when a leased key changed, so its cached copy is read again. */
  onKeyChanged: (keyId: string) => void = () => undefined

  constructor(config: LeaseConfig) {
    this.config = config
  }

  get enabled() {
    return this.config.leaseSeconds > 0
  }

  start() {
    if (!this.enabled) return
    books.add(this)
    this.jobs.push(scheduleJob('checking leased keys', this.config.leaseCheckMs, () => this.check()))
  }

  /** Hands every lease back (shutdown): served charges are written first. */
  async stop() {
    this.stopped = true
    await Promise.all(this.jobs.splice(0).map(job => job.stop()))
    await Promise.all([...this.held].map(lease => this.handBack(lease, 'shutdown')))
    books.delete(this)
  }

  /** Draws `units` for a call of `key` on its lease, or answers undefined when the call must reserve in the database. */
  draw(key: KeyRecord, units: number): Lease | undefined {
    this.rates.count(key.ID)
    const lease = this.byKey.get(key.ID)
    if (!lease || lease.closing) return undefined
    if (lease.version !== key.version || lease.unspent < units) {
      void this.handBack(lease, lease.version !== key.version ? 'key changed' : 'spent')
      return undefined
    }
    lease.unspent -= units
    lease.inFlight++
    lease.lastDrawnAt = Date.now()
    // Spent: it goes back once its calls are answered. Low: the next one is taken meanwhile.
    if (lease.unspent === 0) void this.handBack(lease, 'spent')
    else if (lease.low) this.consider(key, units, lease.balanceBeside)
    return lease
  }

  /** The key changed (another instance said so): its lease goes back; its next call reads the key again. */
  keyChanged(keyId: string) {
    for (const lease of this.held) if (lease.keyId === keyId) void this.handBack(lease, 'key changed')
  }

  /** The call drawn on the lease was served: its charge is written with the next batch. */
  served(lease: Lease, charge: DrawnCharge) {
    lease.drawn.push(charge)
    lease.callAnswered()
    this.writeSoon()
  }

  /** The call drawn on the lease was not served (an error, a timeout): its units are the lease's again. */
  notServed(lease: Lease, units: number) {
    lease.unspent += units
    lease.callAnswered()
  }

  /**
   * After a call reserved in the database: takes a lease for the key in the background when its
   * calls come fast enough and its balance is large enough. The call itself never waits for it.
   */
  consider(key: KeyRecord, price: number, unitsLeft: number) {
    if (!this.enabled || this.stopped || this.taking.has(key.ID)) return
    const current = this.byKey.get(key.ID)
    if (current && !current.closing && !current.low) return
    if (unitsLeft < this.config.leaseMinBalance) return
    const rate = this.rates.perSecond(key.ID)
    if (rate < MIN_LEASE_RATE) return
    const calls = Math.max(MIN_LEASE_CALLS, Math.ceil(rate * this.config.leaseSeconds))
    const units = Math.min(calls * price, Math.floor(unitsLeft / LEASE_SHARE))
    if (units < MIN_LEASE_CALLS * price) return
    this.taking.add(key.ID)
    const id = cds.utils.uuid()
    void outsideRequest(() => ledger.takeLease({ keyId: key.ID, secretHash: key.secretHash, version: key.version, units, requestId: id }))
      .then(taken => {
        if (!taken.ok) return
        const lease = new Lease(id, key.ID, key.version, units, taken.unitsLeft)
        const replaced = this.byKey.get(key.ID)
        this.byKey.set(key.ID, lease)
        this.held.add(lease)
        if (replaced) void this.handBack(replaced, 'replaced')
        // Stopped while it was being taken: it goes straight back.
        if (this.stopped) void this.handBack(lease, 'shutdown')
      })
      .catch(error => cds.log('gateway').warn(`could not lease units of key ${key.ID}; its calls reserve one by one:`, (error as Error).message))
      .finally(() => this.taking.delete(key.ID))
  }

  /**
   * A call of the key found too few units in the database: the units may sit in leases. Hands this
   * instance's lease back and recalls the others', waiting for them a little. Answers whether
   * units may have come back, so reserving again is worth it. One recall per key at a time.
   */
  makeRoom(keyId: string): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false)
    let recall = this.recalls.get(keyId)
    if (!recall) {
      recall = this.recall(keyId).finally(() => this.recalls.delete(keyId))
      this.recalls.set(keyId, recall)
    }
    return recall
  }

  private async recall(keyId: string): Promise<boolean> {
    const own = [...this.held].filter(lease => lease.keyId === keyId)
    await Promise.all(own.map(lease => this.handBack(lease, 'spent')))
    let open = await ledger.recallLeases(keyId)
    if (!open) return own.length > 0
    const giveUpAt = Date.now() + RECALL_WAIT_MS
    while (open && Date.now() < giveUpAt) {
      await new Promise(resolve => setTimeout(resolve, RECALL_POLL_MS))
      open = await ledger.recallLeases(keyId)
    }
    return true
  }

  /**
   * Stops drawing on the lease, waits for its calls to be answered, writes their charges and closes
   * it: what it holds undrawn goes back to the key. Once, however often it is asked.
   */
  handBack(lease: Lease, why: string): Promise<void> {
    lease.closing ??= (async () => {
      await lease.allAnswered()
      try {
        await this.writeDrawn()
        await ledger.closeLease(lease.id, why)
      } catch (error) {
        cds.log('gateway').warn(`could not hand back lease ${lease.id} of key ${lease.keyId} (${why}); the sweeper voids it:`, (error as Error).message)
      } finally {
        this.forgetLease(lease)
      }
    })()
    return lease.closing
  }

  /** Writes the charges served on every lease, one transaction per lease; one write at a time. */
  writeDrawn(): Promise<void> {
    if (this.writeTimer) clearTimeout(this.writeTimer)
    this.writeTimer = undefined
    const previous = this.writing ?? Promise.resolve()
    const next = previous.then(() => this.writeEach())
    this.writing = next.finally(() => {
      if (this.writing === next) this.writing = undefined
    })
    return next
  }

  private writeSoon() {
    this.writeTimer ??= outsideRequest(() => setTimeout(() => void this.writeDrawn(), DRAW_BATCH_MS).unref())
  }

  private async writeEach() {
    const leases = [...this.held].filter(lease => lease.drawn.length)
    if (!leases.length) return
    const draws = leases.map(lease => ({ lease, charges: lease.drawn.splice(0) }))
    try {
      const closed = await ledger.drawOnLeases(draws.map(({ lease, charges }) => ({ leaseId: lease.id, keyId: lease.keyId, charges })))
      for (const { lease, charges } of draws) if (closed.has(lease.id)) this.lost(lease, charges.length)
      this.writeFailures.succeeded()
    } catch (error) {
      // The charges wait for the next attempt; should a lease be voided meanwhile, its calls are never charged.
      for (const { lease, charges } of draws) lease.drawn.unshift(...charges)
      this.writeTimer ??= outsideRequest(() => setTimeout(() => void this.writeDrawn(), DRAW_RETRY_MS).unref())
      this.writeFailures.failed(error)
    }
  }

  /** The lease was closed elsewhere (voided, its key revoked): the calls it served cost nothing. */
  private lost(lease: Lease, calls: number) {
    this.forgetLease(lease)
    lease.closing ??= Promise.resolve()
    cds.log('gateway').warn(`lease ${lease.id} of key ${lease.keyId} was closed elsewhere; ${calls} calls served on it are not charged`)
  }

  private forgetLease(lease: Lease) {
    this.held.delete(lease)
    if (this.byKey.get(lease.keyId) === lease) this.byKey.delete(lease.keyId)
  }

  /** Hands back leases whose key changed, that were recalled or are idle; drops those closed elsewhere; renews the rest. */
  private async check() {
    const leases = [...this.held].filter(lease => !lease.closing)
    if (!leases.length) return
    const { keys, leases: states } = await ledger.leaseChecks([...new Set(leases.map(lease => lease.keyId))], leases.map(lease => lease.id))
    const keyById = new Map(keys.map(key => [key.ID, key]))
    const stateById = new Map(states.map(state => [state.ID, state]))
    const now = Date.now()
    for (const lease of leases) {
      const key = keyById.get(lease.keyId)
      const state = stateById.get(lease.id)
      if (!key || Number(key.version) !== lease.version || key.status !== ApiKey.status.active || Date.parse(key.validUntil) <= now) {
        this.onKeyChanged(lease.keyId)
        void this.handBack(lease, 'key changed')
      } else if (state?.state !== 'pending') this.lost(lease, 0)
      else if (state.outcome === ledger.RECALLED) void this.handBack(lease, ledger.RECALLED)
      else if (lease.inFlight === 0 && now - lease.lastDrawnAt > this.config.leaseIdleMs) void this.handBack(lease, 'idle')
    }
    if (now - this.lastRenewal > (this.config.reservationTimeoutS * 1000) / 3) {
      this.lastRenewal = now
      await ledger.renewLeases([...this.held].map(lease => lease.id))
    }
  }
}

/** Calls per second of each key, over the last second or so: the current second's count plus the previous one's share. */
class CallRates {
  private readonly windows = new LRUCache<string, { start: number; count: number; previous: number }>({ max: 10_000 })

  count(keyId: string) {
    this.current(keyId).count++
  }

  perSecond(keyId: string): number {
    const window = this.current(keyId)
    const elapsed = (Date.now() - window.start) / 1000
    return window.count + window.previous * Math.max(0, 1 - elapsed)
  }

  private current(keyId: string) {
    const now = Date.now()
    let window = this.windows.get(keyId)
    if (!window) this.windows.set(keyId, (window = { start: now, count: 0, previous: 0 }))
    if (now - window.start >= 1000) {
      window.previous = now - window.start < 2000 ? window.count : 0
      window.count = 0
      window.start = now - ((now - window.start) % 1000)
    }
    return window
  }
}
