import cds from '@sap/cds'
import { Readable } from 'node:stream'
import { AuditLog, LedgerEntries, Usage } from '#cds-models/OperatorService'
import { badInput, notFound } from '../lib/errors.ts'
import { currentActor, recordAction } from './audit.ts'

/**
 * The operator's exports of a period (the ledger, the usage, the audit) as CSV or JSON, streamed:
 * the rows are read in pages of EXPORT_PAGE_ROWS ordered by a unique key and each page is read
 * after the one before it (keyset pagination: "after the last row sent"), so an export of any
 * size holds one page in memory. The pages are read in the request's transaction (a second root
 * transaction would wait for it on SQLite), which stays open until the last byte is written; it
 * only reads until the export is recorded in the audit at its end.
 */

export const EXPORT_PAGE_ROWS = 1000
/** The longest period one export covers. */
export const EXPORT_MAX_DAYS = 92
const DAY_MS = 86_400_000

export type ExportFormat = 'csv' | 'json'
export type Dataset = 'ledger' | 'usage' | 'audit'

interface Column { name: string; text?: boolean }

/**
 * What each export reads: the columns in order (text columns are the ones a spreadsheet could take
 * for a formula), the unique order the pages follow, and how the period and the key select rows.
 */
const DATASETS: Record<Dataset, { entity: { name: string }; columns: Column[]; order: string[]; time: string; keyColumn?: string; byDay?: boolean }> = {
  ledger: {
    entity: LedgerEntries,
    columns: [
      { name: 'createdAt' }, { name: 'ID' }, { name: 'apiKey_ID' }, { name: 'kind' }, { name: 'units' }, { name: 'state' },
      { name: 'routeClass', text: true }, { name: 'route', text: true }, { name: 'routeFamily', text: true }, { name: 'requestId', text: true }, { name: 'outcome', text: true },
      { name: 'note', text: true }, { name: 'reference', text: true }, { name: 'resolvedAt' }, { name: 'leased' },
    ],
    order: ['createdAt', 'ID'], time: 'createdAt', keyColumn: 'apiKey_ID',
  },
  usage: {
    entity: Usage,
    columns: [{ name: 'day' }, { name: 'apiKey_ID' }, { name: 'routeFamily', text: true }, { name: 'routeClass', text: true }, { name: 'calls' }, { name: 'unitsCharged' }, { name: 'unitsRefunded' }],
    order: ['day', 'apiKey_ID', 'routeFamily', 'routeClass'], time: 'day', keyColumn: 'apiKey_ID', byDay: true,
  },
  audit: {
    entity: AuditLog,
    columns: [
      { name: 'sequence' }, { name: 'occurredAt' }, { name: 'actor', text: true }, { name: 'action', text: true }, { name: 'target', text: true },
      { name: 'before', text: true }, { name: 'after', text: true }, { name: 'reason', text: true }, { name: 'previousHash' }, { name: 'hash' },
    ],
    order: ['sequence'], time: 'occurredAt',
  },
}

export interface ExportParameters { from?: string | null; to?: string | null; key?: string | null; format?: string | null }

export interface ExportRequest {
  dataset: Dataset
  /** The period: from (inclusive) to (exclusive), ISO times. */
  from: string
  to: string
  key: string | null
  format: ExportFormat
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/

function timeOf(value: string | null | undefined, name: 'from' | 'to'): string {
  const text = value?.trim()
  if (!text) throw badInput('MISSING_PARAMETER', `${name} is required: a date (2026-11-01) or a time (2026-11-01T00:00:00Z)`, name)
  const time = ISO_TIME.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(time)) throw badInput('INVALID_TIME', `${name} must be a date (2026-11-01) or a time with its zone (2026-11-01T00:00:00Z), got '${text.slice(0, 40)}'`, name)
  return new Date(time).toISOString()
}

/** The export asked for, checked: each bad parameter is a 400 naming it. */
export function exportRequest(dataset: Dataset, parameters: ExportParameters): ExportRequest {
  const format = (parameters.format?.trim() || 'csv').toLowerCase()
  if (format !== 'csv' && format !== 'json') throw badInput('UNKNOWN_FORMAT', `format must be 'csv' or 'json', got '${String(parameters.format).slice(0, 20)}'`, 'format')
  const from = timeOf(parameters.from, 'from')
  const to = timeOf(parameters.to, 'to')
  if (from >= to) throw badInput('INVALID_PERIOD', `from (${from}) must be before to (${to})`, 'from')
  if (Date.parse(to) - Date.parse(from) > EXPORT_MAX_DAYS * DAY_MS) throw badInput('PERIOD_TOO_LONG', `An export covers at most ${EXPORT_MAX_DAYS} days; ${from} to ${to} is longer: export it in parts`, 'to')
  const key = parameters.key?.trim() || null
  if (key !== null && !UUID.test(key)) throw badInput('INVALID_KEY_ID', `key must be a key's ID (a UUID), got '${key.slice(0, 40)}'`, 'key')
  return { dataset, from, to, key: key?.toLowerCase() ?? null, format }
}

/** A CSV cell: quoted when it holds a quote, comma or line break; text starting like a formula gets a leading apostrophe. */
export function csvCell(value: unknown, text = false): string {
  if (value === null || value === undefined) return ''
  let cell = String(value)
  if (text && /^[=+\-@\t\r]/.test(cell)) cell = `'${cell}`
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell
}

/** A row as JSON, its values as CAP reads them (Int64 as strings, as the OData reads answer them); a number beyond JSON's exact integers as a string too. */
const jsonRow = (row: Record<string, unknown>, columns: Column[]) =>
  JSON.stringify(Object.fromEntries(columns.map(({ name }) => [name, typeof row[name] === 'number' && !Number.isSafeInteger(row[name]) ? String(row[name]) : row[name] ?? null])))

type Row = Record<string, unknown>
interface Reader { run(query: unknown): Promise<unknown> }

/** The condition "after this row" in the export's order: (a > x) or (a = x and b > y) or ... */
function after(order: string[], last: Row): unknown[] {
  const alternatives = order.map((column, i) => ({
    xpr: [...order.slice(0, i).flatMap(equal => [{ ref: [equal] }, '=', { val: last[equal] }, 'and']), { ref: [column] }, '>', { val: last[column] }],
  }))
  return alternatives.flatMap((alternative, i) => (i ? ['or', alternative] : [alternative]))
}

/** The export's rows, page by page, each page read after the last row of the one before. */
export async function* exportPages(request: ExportRequest, db: Reader, pageRows = EXPORT_PAGE_ROWS): AsyncGenerator<Row[]> {
  const { entity, columns, order, time, keyColumn, byDay } = DATASETS[request.dataset]
  const [since, until] = byDay ? [request.from.slice(0, 10), new Date(Date.parse(request.to) - 1).toISOString().slice(0, 10)] : [request.from, request.to]
  const where: unknown[] = [{ ref: [time] }, '>=', { val: since }, 'and', { ref: [time] }, byDay ? '<=' : '<', { val: until }]
  const filter = (column: string, value: string) => where.push('and', { ref: [column] }, '=', { val: value })
  if (request.key && keyColumn) filter(keyColumn, request.key)
  if (request.key && request.dataset === 'audit') filter('target', `key:${request.key}`)
  let last: Row | undefined
  for (;;) {
    const query = SELECT.from(entity.name).columns(...columns.map(column => column.name)).orderBy(...order).limit(pageRows)
    ;(query.SELECT as { where: unknown[] }).where = last ? [...where, 'and', { xpr: after(order, last) }] : where
    const rows = (await db.run(query)) as Row[]
    if (rows.length) yield rows
    if (rows.length < pageRows) return
    last = rows[rows.length - 1]
  }
}

/** The export as text chunks, one per page: CSV with a header line, or one JSON array. */
export async function* exportText(request: ExportRequest, pages: AsyncIterable<Row[]>): AsyncGenerator<string> {
  const { columns } = DATASETS[request.dataset]
  if (request.format === 'csv') {
    yield columns.map(column => column.name).join(',') + '\r\n'
    for await (const rows of pages) yield rows.map(row => columns.map(column => csvCell(row[column.name], column.text)).join(',') + '\r\n').join('')
    return
  }
  yield '['
  let first = true
  for await (const rows of pages) {
    yield rows.map(row => `${first ? ((first = false), '\n') : ',\n'}${jsonRow(row, columns)}`).join('')
  }
  yield first ? ']\n' : '\n]\n'
}

/** The file name an export is saved as: `ledger-2026-11-01-2026-12-01[-<key>].csv`. */
export function exportFilename(request: ExportRequest): string {
  const day = (time: string) => (time.endsWith('T00:00:00.000Z') ? time.slice(0, 10) : time.replace(/[:.]/g, '-'))
  return `${request.dataset}-${day(request.from)}-${day(request.to)}${request.key ? `-${request.key}` : ''}.${request.format}`
}

const MEDIA_TYPES: Record<ExportFormat, string> = { csv: 'text/csv', json: 'application/json' }

/**
 * The export's text with its audit entry written after the last page is read and before the last
 * chunk is sent: the audit's head is taken (and held until the commit) only at the end, so a long
 * export holds up no other operator action; an export broken off earlier is not recorded, and one
 * that cannot be recorded never reaches its end.
 */
async function* auditedAtEnd(text: AsyncIterable<string>, record: () => Promise<unknown>): AsyncGenerator<string> {
  let held: string | undefined
  for await (const chunk of text) {
    if (held !== undefined) yield held
    held = chunk
  }
  await record()
  if (held !== undefined) yield held
}

/**
 * Checks the export and answers the stream CAP writes to the response as the pages are read. The
 * pages and the audit entry run in the request's transaction, named here: they run after the
 * handler returned, where the request's context may not reach.
 */
export async function startExport(dataset: Dataset, parameters: ExportParameters) {
  const request = exportRequest(dataset, parameters)
  const db = cds.db.tx(cds.context!)
  if (request.key && !(await db.run(SELECT.one.from('OperatorService.Keys').columns('ID').where({ ID: request.key })))) {
    throw notFound('KEY_NOT_FOUND', `There is no key ${request.key}`, 'key')
  }
  const exported = { actor: currentActor(), action: `export.${dataset}`, target: request.key ? `key:${request.key}` : dataset, before: null, after: { from: request.from, to: request.to, key: request.key, format: request.format } }
  const text = auditedAtEnd(exportText(request, exportPages(request, db)), () => recordAction(exported, db))
  // CAP takes the media type and the file name of a streamed answer from the stream's own properties.
  return Object.assign(Readable.from(text, { highWaterMark: 1 }), { mimetype: MEDIA_TYPES[request.format], filename: exportFilename(request) })
}
