import { DatabaseSync } from 'node:sqlite'
import { Client } from 'pg'

/**
 * Reads the gateway's key and ledger tables (db/gateway.cds: gateway.ApiKeys, gateway.LedgerEntries)
 * straight from the instances' database, beside the servers, to check what metering promises.
 * Unquoted names: SQLite ignores their case, PostgreSQL folds them to the lower case CAP created.
 */

export interface Totals {
  /** Units of charges that stand (committed). */
  committed: number
  /** Units given back (refund entries: refused, failed, timed-out and voided calls). */
  refunded: number
  /** Units the sweeper gave back: charges a crashed or cut-off call left pending. */
  voided: number
  pending: number
}

export interface InvariantReport {
  /** Keys whose balance differs from the sum of their ledger. */
  balanceMismatches: { id: string; balance: number; ledger: number }[]
  /** Charges still pending although created more than `olderThanS` seconds ago. */
  stalePending: number
  /** Request ids with more than one charge, or more than one refund. */
  chargedTwice: string[]
  /** Charges refunded without a refund entry, or refund entries of a charge not refunded. */
  refundsAstray: number
}

const BALANCES = `SELECT k.ID AS id, k.unitsLeft AS balance, COALESCE(SUM(e.units), 0) AS ledger
  FROM gateway_ApiKeys k LEFT JOIN gateway_LedgerEntries e ON e.apiKey_ID = k.ID GROUP BY k.ID, k.unitsLeft`
const PENDING_BEFORE = `SELECT COUNT(*) AS n FROM gateway_LedgerEntries WHERE kind = 'charge' AND state = 'pending' AND createdAt < ?`
const TWICE = `SELECT requestId AS "requestId" FROM gateway_LedgerEntries WHERE kind IN ('charge', 'refund') AND requestId IS NOT NULL
  GROUP BY requestId, kind HAVING COUNT(*) > 1`
const ASTRAY = `SELECT COUNT(*) AS n FROM gateway_LedgerEntries c WHERE c.kind = 'charge' AND (c.state = 'refunded') <>
  EXISTS (SELECT 1 FROM gateway_LedgerEntries r WHERE r.kind = 'refund' AND r.requestId = c.requestId)`
const TOTALS = `SELECT
  COALESCE(SUM(CASE WHEN kind = 'charge' AND state = 'committed' THEN -units ELSE 0 END), 0) AS committed,
  COALESCE(SUM(CASE WHEN kind = 'refund' THEN units ELSE 0 END), 0) AS refunded,
  COALESCE(SUM(CASE WHEN kind = 'refund' AND outcome = 'voided' THEN units ELSE 0 END), 0) AS voided,
  COALESCE(SUM(CASE WHEN kind = 'charge' AND state = 'pending' THEN 1 ELSE 0 END), 0) AS pending
  FROM gateway_LedgerEntries`
const BY_CLASS = `SELECT routeClass AS "routeClass", state AS "state", COUNT(*) AS n FROM gateway_LedgerEntries WHERE kind = 'charge'
  GROUP BY routeClass, state ORDER BY routeClass, state`
const JOBS = `SELECT status AS "status", errorCode AS "errorCode", COUNT(*) AS n FROM chainb_Jobs GROUP BY status, errorCode ORDER BY status, errorCode`
const CHARGES_OF_KEY = `SELECT
  COALESCE(SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0) AS pending,
  COALESCE(SUM(CASE WHEN state = 'refunded' AND outcome = 'voided' THEN 1 ELSE 0 END), 0) AS voided,
  COUNT(*) AS total
  FROM gateway_LedgerEntries WHERE kind = 'charge' AND apiKey_ID = ?`
const KEY_BY_HASH = `SELECT ID AS id FROM gateway_ApiKeys WHERE secretHash = ?`

type Query = (sql: string, values?: unknown[]) => Promise<Record<string, unknown>[]>

export class LedgerReader {
  private readonly query: Query
  readonly close: () => Promise<void>

  private constructor(query: Query, close: () => Promise<void>) {
    this.query = query
    this.close = close
  }

  /** The cluster's database: a SQLite file, or a database of the local PostgreSQL server. */
  static async open(database: { sqliteFile?: string; postgresName?: string }): Promise<LedgerReader> {
    if (database.sqliteFile) {
      let sqlite: DatabaseSync | undefined
      // Opened at first use: the first instance creates the file.
      const query: Query = async (sql, values = []) => {
        sqlite ??= new DatabaseSync(database.sqliteFile!, { timeout: 10_000 })
        return sqlite.prepare(sql).all(...(values as (string | number)[])) as Record<string, unknown>[]
      }
      return new LedgerReader(query, async () => sqlite?.close())
    }
    // A fresh connection per read: the database is taken away during the harness, and a read must not die with an old connection.
    const query: Query = async (sql, values = []) => {
      const client = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: database.postgresName! })
      await client.connect()
      try {
        let n = 0
        return (await client.query(sql.replace(/\?/g, () => `$${++n}`), values)).rows
      } finally {
        await client.end()
      }
    }
    return new LedgerReader(query, async () => undefined)
  }

  async keyIdOf(secretHash: string): Promise<string | undefined> {
    const [row] = await this.query(KEY_BY_HASH, [secretHash])
    return row?.id as string | undefined
  }

  async totals(): Promise<Totals> {
    const [row] = await this.query(TOTALS)
    return { committed: Number(row.committed), refunded: Number(row.refunded), voided: Number(row.voided), pending: Number(row.pending) }
  }

  /** Charges still pending that were made before the moment given. */
  async pendingMadeBefore(moment: Date): Promise<number> {
    const [row] = await this.query(PENDING_BEFORE, [moment.toISOString()])
    return Number(row.n)
  }

  /** One key's charges: how many are pending, how many the sweeper voided, how many in all. */
  async chargesOf(keyId: string): Promise<{ pending: number; voided: number; total: number }> {
    const [row] = await this.query(CHARGES_OF_KEY, [keyId])
    return { pending: Number(row.pending), voided: Number(row.voided), total: Number(row.total) }
  }

  /** Charges by route class and state: `read-action committed` → count. */
  async chargesByClass(): Promise<Map<string, number>> {
    return new Map((await this.query(BY_CLASS)).map(row => [`${row.routeClass} ${row.state}`, Number(row.n)]))
  }

  /** Chain-B jobs (the writes) by status and error code: `failed CHAIN_B_UNAVAILABLE` → count. */
  async jobsByOutcome(): Promise<Map<string, number>> {
    return new Map((await this.query(JOBS)).map(row => [`${row.status}${row.errorCode ? ' ' + row.errorCode : ''}`, Number(row.n)]))
  }

  /** The metering invariants now; a charge counts as stale when it was created more than `olderThanS` seconds ago and is still pending. */
  async invariants(olderThanS: number): Promise<InvariantReport> {
    const balances = await this.query(BALANCES)
    const cutoff = new Date(Date.now() - olderThanS * 1000).toISOString()
    const [stale] = await this.query(PENDING_BEFORE, [cutoff])
    const twice = await this.query(TWICE)
    const [astray] = await this.query(ASTRAY)
    return {
      balanceMismatches: balances.filter(row => Number(row.balance) !== Number(row.ledger)).map(row => ({ id: String(row.id), balance: Number(row.balance), ledger: Number(row.ledger) })),
      stalePending: Number(stale.n),
      chargedTwice: twice.map(row => String(row.requestId)),
      refundsAstray: Number(astray.n),
    }
  }
}
