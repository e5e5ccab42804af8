import * as sqlite from '@cap-js/sqlite'
import { defaultExport } from './interop.ts'

const SQLiteService = defaultExport<any>(sqlite)

/**
 * SQLite for a database file (development, self-hosted): WAL (CAP's default for files) with
 * `synchronous = NORMAL`. A crash of the process loses no committed transaction; a power loss may
 * lose the last ones, never consistency. With the default FULL every commit waits for the disk,
 * which made each metered call (two small commits) several times slower. Another process writing
 * the same file (the gateway's command line while a server runs) is waited for, up to
 * BUSY_TIMEOUT_MS (option `busyTimeoutMs`; the command line waits longer), instead of failing at once: transactions on a file begin IMMEDIATE, taking the
 * write lock first, because a deferred one that read before the other process wrote cannot wait
 * for it (SQLite fails its first write at once, "database is locked"). Deleted and overwritten
 * content is zeroed where that costs no extra I/O (`secure_delete = FAST`: within b-tree pages,
 * not on freed pages nor in the WAL's older page versions); what must never be readable from the
 * file is not written to it in plain text at all (a proving job's witness is sealed, see
 * srv/chainb/jobs/witness.ts).
 */
const BUSY_TIMEOUT_MS = 5000

export default class SQLiteFileService extends SQLiteService {
  exec(sql: string) {
    return super.exec(sql === 'BEGIN' && this.dbc?.beginsImmediate ? 'BEGIN IMMEDIATE' : sql)
  }

  get factory() {
    const factory = super.factory
    return {
      ...factory,
      create: async (tenant: string) => {
        const connection = await factory.create(tenant)
        if (this.url4(tenant) !== ':memory:') {
          const busyTimeoutMs = Number((this.options as { busyTimeoutMs?: number }).busyTimeoutMs ?? BUSY_TIMEOUT_MS)
          connection.exec(`PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA secure_delete = FAST`)
          connection.beginsImmediate = true
        }
        return connection
      },
    }
  }
}
