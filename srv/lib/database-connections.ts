import cds from '@sap/cds'
import type { EventEmitter } from 'node:events'

/**
 * On PostgreSQL, a pooled connection the database cut (a restart, a fail-over,
 * `pg_terminate_backend`) is replaced, never handed out again; an instance serves again as soon
 * as the database takes connections, without a restart.
 *
 * Why this is needed: @cap-js/postgres creates its `pg` clients without an 'error' listener and
 * judges a pooled client by `dbc.open`, which only the client's 'end' event clears. When the server
 * cuts a connection, the client emits 'error' first; with no listener that throws (an uncaught
 * exception) before the client emits 'end', so `open` stays true, the pool's test on borrow passes,
 * and the dead client answers every later query "Client has encountered a connection error and is
 * not queryable" until it happens to be evicted as idle, which never comes while it keeps being
 * borrowed.
 *
 * The fix uses the hooks DatabaseService offers subclasses (`acquire`, `release`): every connection
 * gets an 'error' listener the first time it is borrowed, which marks it broken (and lets 'end'
 * follow); a broken connection is destroyed on release and on borrow instead of going back to the
 * pool. The loss and the return of the database are logged once each, not once per connection.
 */

interface Connection extends EventEmitter {
  open?: boolean
  [BROKEN]?: boolean
  [WATCHED]?: boolean
}

interface Pool extends Partial<EventEmitter> {
  destroy(connection: Connection): Promise<void>
  readonly max?: number
  readonly options?: { max?: number }
  [WATCHED]?: boolean
}

interface PooledService {
  kind?: string
  pool: Pool
  dbc?: Connection
  acquire(): Promise<Connection>
  release(): Promise<void>
  destroy(): Promise<void>
}

const BROKEN = Symbol('broken connection')
const WATCHED = Symbol('watched connection')
const LOG = cds.log('db')

let lost = false
let connectedOnce = false
let stopping = false
/** Why the pool could not connect last, until it connects again. */
let lastConnectFailure: Error | undefined

export function replaceBrokenConnections(db: cds.Service) {
  const service = db as unknown as PooledService
  if (service.kind !== 'postgres') return
  const { acquire, release } = service
  // Connections cut while the server stops (its pool drained, the database dropped in tests) are no news.
  cds.on('shutdown', () => (stopping = true))
  service.acquire = async function (this: PooledService) {
    watchPool(this.pool)
    // Every pooled connection may be broken at once (after an outage): each is destroyed, then the pool makes new ones.
    for (let attempt = 0; ; attempt++) {
      const connection = await acquire.call(this).catch(unreachableOrBusy)
      // A connection borrowed for the first time was made just now: the database takes connections.
      const made = !connection[WATCHED]
      watch(connection)
      if (usable(connection)) return made ? regained(connection) : connection
      await this.pool.destroy(connection)
      if (attempt > (this.pool.max ?? this.pool.options?.max ?? 10)) throw new Error('Client has encountered a connection error and is not queryable')
    }
  }
  service.release = async function (this: PooledService) {
    if (this.dbc && !usable(this.dbc)) return this.destroy()
    return release.call(this)
  }
}

/** The first time a connection is borrowed it gets the listener @cap-js/postgres does not give it. */
function watch(connection: Connection) {
  if (connection[WATCHED]) return
  connection[WATCHED] = true
  connection.on('error', (error: Error) => {
    connection[BROKEN] = true
    if (lost || stopping) return
    lost = true
    LOG.warn(`a database connection was lost (${error.message}); broken connections are replaced as they are next used`)
  })
  connection.on('end', () => (connection[BROKEN] = true))
}

/**
 * The pool (generic-pool, as @cap-js/postgres uses it) keeps trying to connect while requests
 * wait and reports each failure only as an event; a request then fails with the pool's acquire
 * time-out. Remembering the last failure tells a database that is away from a pool that is busy.
 */
function watchPool(pool: Pool) {
  if (pool[WATCHED] || typeof pool.on !== 'function') return
  pool[WATCHED] = true
  pool.on('factoryCreateError', (error: Error) => {
    lastConnectFailure = error
    // Before the first connection the start-up checks say what is wrong, in one message.
    if (lost || !connectedOnce || stopping) return
    lost = true
    LOG.warn(`the database cannot be reached (${error.message}); requests are answered 503 DATABASE_UNAVAILABLE until it can`)
  })
}

function unreachableOrBusy(error: Error): never {
  if (lastConnectFailure) throw new Error(`The database cannot be reached: ${lastConnectFailure.message}`, { cause: lastConnectFailure })
  throw error
}

const usable = (connection: Connection) => !connection[BROKEN] && connection.open !== false

function regained(connection: Connection) {
  connectedOnce = true
  lastConnectFailure = undefined
  if (lost) {
    lost = false
    LOG.info('the database answers again')
  }
  return connection
}

interface CollationChecking {
  kind?: string
  _initalCollateCheck?: boolean
  _checkCollation(): Promise<void>
}

/**
 * @cap-js/postgres looks up the database's collations before the first statement of a
 * transaction and means to do it once per service, but marks it done on the transaction (a new
 * object each time), so every transaction repeats the lookup: one more round trip per transaction.
 * Its result lives on the SQL renderer's class, shared by all, so once it has run it is marked done
 * on the service itself.
 */
export function checkCollationsOnce(db: cds.Service) {
  const service = db as unknown as CollationChecking
  if (service.kind !== 'postgres' || typeof service._checkCollation !== 'function') return
  const check = service._checkCollation
  service._checkCollation = async function (this: CollationChecking) {
    await check.call(this)
    service._initalCollateCheck = true
  }
}
