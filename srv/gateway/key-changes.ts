import cds from '@sap/cds'
import { forDatabase, isPostgres } from '../lib/plain-sql.ts'
import { FailureStreak } from '../lib/failure-streak.ts'

/**
 * A key's change (rotated, revoked, a grant revoked) told to every instance as it commits, on
 * PostgreSQL: the change's transaction sends a notification with the key's id, and each instance
 * listens on a connection of its own, so a leased key is handed back and read again within
 * milliseconds. Should the listening connection drop, it is made again with back-off; the lease
 * check (leases.ts) polls meanwhile and finds what was missed. SQLite serves one instance: no
 * notifications, the poll is enough.
 */

const CHANNEL = 'gateway_key_changes'
const RECONNECT_FIRST_MS = 1000
const RECONNECT_MAX_MS = 30_000

/** Tells every instance, once the current transaction commits, that the key changed. */
export async function announceKeyChange(keyId: string): Promise<void> {
  if (isPostgres()) await cds.run(forDatabase(`SELECT pg_notify('${CHANNEL}', ?)`), [keyId])
}

interface NotifyingClient {
  query(sql: string): Promise<unknown>
  on(event: 'notification', listener: (message: { payload?: string }) => void): void
  on(event: 'error' | 'end', listener: (error?: Error) => void): void
  end(): Promise<void>
}

export interface KeyChangeListener {
  stop(): Promise<void>
}

/** Calls `changed(keyId)` for every key change any instance announces; nothing on SQLite. */
export function listenForKeyChanges(changed: (keyId: string) => void): KeyChangeListener {
  if (!isPostgres()) return { stop: async () => undefined }
  const failures = new FailureStreak('listening for key changes', { log: cds.log('gateway') })
  let client: NotifyingClient | undefined
  let stopped = false
  let delay = RECONNECT_FIRST_MS
  let timer: NodeJS.Timeout | undefined

  const again = () => {
    if (stopped || timer) return
    timer = setTimeout(() => {
      timer = undefined
      void connect()
    }, delay).unref()
    delay = Math.min(delay * 2, RECONNECT_MAX_MS)
  }
  const connect = async () => {
    try {
      // A connection made as the database service makes its pooled ones (same credentials and TLS), outside the pool.
      const made = (await (cds.db as unknown as { factory: { create(): Promise<NotifyingClient> } }).factory.create())
      client = made
      made.on('notification', message => message.payload && changed(message.payload))
      made.on('error', () => undefined)
      made.on('end', () => {
        if (client === made) client = undefined
        again()
      })
      await made.query(`LISTEN ${CHANNEL}`)
      if (stopped) return void made.end().catch(() => undefined)
      failures.succeeded()
      delay = RECONNECT_FIRST_MS
    } catch (error) {
      failures.failed(error, `; trying again in ${delay / 1000} s (the lease check polls meanwhile)`)
      again()
    }
  }
  void connect()
  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await client?.end().catch(() => undefined)
    },
  }
}
