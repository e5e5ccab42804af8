import cds from '@sap/cds'
import { request } from 'node:http'
import { bearer, issueTestKey, ledgerOf, rawRequest, settled } from '../support/gateway.ts'
import { csvCell } from '../../srv/operator/exports.ts'

/**
 * The operator's usage (per key, day and route class, from real metered calls through the hosted
 * gateway) and the streamed exports of the ledger, the usage and the audit: correct rows in CSV and
 * JSON, read from the database in bounded pages with the first bytes sent before the last page is
 * read, nothing lost or repeated at page boundaries between rows of equal time, bad parameters a
 * 400 naming the problem, every export audited, and no API key reaching any of it.
 */
process.env.GATEWAY_ENABLED = 'true'
const app = cds.test(__dirname + '/../..') as any
const { GET, defaults } = app
defaults.validateStatus = () => true

afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

const OP = '/odata/v4/operator'
const alice = { auth: { username: 'alice', password: '' } }
const ALICE_BASIC = `Basic ${Buffer.from('alice:').toString('base64')}`
const today = () => new Date().toISOString().slice(0, 10)
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
const exportPath = (dataset: string, parameters: Record<string, string>) =>
  `${OP}/export${dataset}(${Object.entries(parameters).map(([name, value]) => `${name}='${value}'`).join(',')})`

/** RFC 4180: quoted cells may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  const endCell = () => {
    row.push(cell)
    cell = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"'
      i++
    } else if (quoted) {
      if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') endCell()
    else if (c === '\r' && text[i + 1] === '\n') {
      endCell()
      rows.push(row)
      row = []
      i++
    } else cell += c
  }
  if (cell || row.length) {
    endCell()
    rows.push(row)
  }
  return rows
}

const records = (csv: string) => {
  const [header, ...rows] = parseCsv(csv)
  return rows.map(row => Object.fromEntries(header.map((name, i) => [name, row[i]])))
}

/** A GET as the operator, the body as text, and how many pages had been read when its first bytes arrived. */
function download(path: string, pagesRead: () => number): Promise<{ status: number; headers: Record<string, unknown>; body: string; pagesAtFirstBytes: number }> {
  return new Promise((resolve, reject) => {
    const sent = request(`${app.url}${path}`, { headers: { authorization: ALICE_BASIC } }, answer => {
      const chunks: Buffer[] = []
      let pagesAtFirstBytes = -1
      answer.on('data', chunk => {
        if (pagesAtFirstBytes < 0) pagesAtFirstBytes = pagesRead()
        chunks.push(chunk)
      })
      answer.on('end', () => resolve({ status: answer.statusCode!, headers: answer.headers, body: Buffer.concat(chunks).toString('utf8'), pagesAtFirstBytes }))
      answer.on('error', reject)
    })
    sent.on('error', reject)
    sent.end()
  })
}

describe('usage of a key by day, route family and route class, from metered calls', () => {
  let key: { id: string; key: string }

  beforeAll(async () => {
    key = await issueTestKey({ units: 1000 })
    for (let i = 0; i < 3; i++) expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(key.key))).status).toBe(200)
    // Rejected by the service: charged, then refunded.
    expect((await GET('/odata/v4/chaina-odata/Blocks?$filter=nonsense eq 1', bearer(key.key))).status).toBe(400)
    // Another family: a row of its own.
    expect((await GET('/odata/v4/analytics/MetricBuckets?$top=1', bearer(key.key))).status).toBe(200)
    await settled(key.id)
  })

  test('one row per day, route family and route class: calls, units charged, units refunded', async () => {
    const { data, status } = await GET(`${OP}/Usage?$filter=apiKey_ID eq ${key.id}&$orderby=routeFamily`, alice)
    expect(data.value).toEqual([
      { apiKey_ID: key.id, day: today(), routeFamily: '/odata/v4/analytics', routeClass: 'analytics', calls: '1', unitsCharged: '3', unitsRefunded: '0' },
      { apiKey_ID: key.id, day: today(), routeFamily: '/odata/v4/chaina-odata', routeClass: 'entity-read', calls: '4', unitsCharged: '4', unitsRefunded: '1' },
    ])
    expect(status).toBe(200)
  })

  test('filtered by period and paged', async () => {
    const other = await issueTestKey({ units: 100 })
    await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(other.key))
    await settled(other.id)
    const page = await GET(`${OP}/Usage?$filter=day ge ${today()} and day lt ${tomorrow()} and (apiKey_ID eq ${key.id} or apiKey_ID eq ${other.id})&$orderby=calls desc&$top=1&$count=true`, alice)
    expect(page.data['@odata.count']).toBe(3)
    expect(page.data.value.map((row: any) => row.apiKey_ID)).toEqual([key.id])
    const next = await GET(`${OP}/Usage?$filter=apiKey_ID eq ${other.id}&$orderby=calls desc&$skip=0`, alice)
    expect(next.data.value.map((row: any) => [row.apiKey_ID, row.routeFamily, row.calls])).toEqual([[other.id, '/odata/v4/chaina-odata', '1']])
    const before = await GET(`${OP}/Usage?$filter=apiKey_ID eq ${key.id} and day lt ${today()}`, alice)
    expect(before.data.value).toEqual([])
  })

  test('the usage export of the key: the same rows, as CSV', async () => {
    const { data, status, headers } = await GET(exportPath('Usage', { from: today(), to: tomorrow(), key: key.id }), alice)
    expect(records(data)).toEqual([
      { day: today(), apiKey_ID: key.id, routeFamily: '/odata/v4/analytics', routeClass: 'analytics', calls: '1', unitsCharged: '3', unitsRefunded: '0' },
      { day: today(), apiKey_ID: key.id, routeFamily: '/odata/v4/chaina-odata', routeClass: 'entity-read', calls: '4', unitsCharged: '4', unitsRefunded: '1' },
    ])
    expect(status).toBe(200)
    expect(headers['content-type']).toMatch(/^text\/csv/)
    expect(headers['content-disposition']).toBe(`attachment; filename="usage-${today()}-${tomorrow()}-${key.id}.csv"`)
  })

  test('the ledger export of the key: its entries of the period, as CSV and as JSON', async () => {
    const ledger = await ledgerOf(key.id)
    const csv = await GET(exportPath('Ledger', { from: today(), to: tomorrow(), key: key.id }), alice)
    expect(records(csv.data).map(row => [row.ID, row.kind, row.units, row.state, row.routeClass])).toEqual(ledger.map(entry => [entry.ID, entry.kind, String(entry.units), entry.state, entry.routeClass ?? '']))
    const json = await GET(exportPath('Ledger', { from: today(), to: tomorrow(), key: key.id, format: 'json' }), alice)
    expect(json.headers['content-type']).toMatch(/^application\/json/)
    expect(json.headers['content-disposition']).toBe(`attachment; filename="ledger-${today()}-${tomorrow()}-${key.id}.json"`)
    const rows = typeof json.data === 'string' ? JSON.parse(json.data) : json.data
    expect(rows.map((row: any) => [row.ID, row.kind, row.units])).toEqual(ledger.map(entry => [entry.ID, entry.kind, String(entry.units)]))
    expect(json.status).toBe(200)
  })

  test('the usage export of every key: this key\'s row among the others, as JSON', async () => {
    const { data, status } = await GET(exportPath('Usage', { from: today(), to: tomorrow(), format: 'json' }), alice)
    const rows = typeof data === 'string' ? JSON.parse(data) : data
    expect(rows).toContainEqual({ day: today(), apiKey_ID: key.id, routeFamily: '/odata/v4/chaina-odata', routeClass: 'entity-read', calls: '4', unitsCharged: '4', unitsRefunded: '1' })
    expect(new Set(rows.map((row: any) => row.apiKey_ID)).size).toBeGreaterThan(1)
    expect(status).toBe(200)
  })

  test('a period without rows: the CSV header alone, an empty JSON array', async () => {
    const csv = await GET(exportPath('Ledger', { from: '2001-01-01', to: '2001-02-01', key: key.id }), alice)
    expect(csv.data).toBe('createdAt,ID,apiKey_ID,kind,units,state,routeClass,route,routeFamily,requestId,outcome,note,reference,resolvedAt,leased\r\n')
    const json = await GET(exportPath('Ledger', { from: '2001-01-01', to: '2001-02-01', key: key.id, format: 'json' }), alice)
    expect(typeof json.data === 'string' ? JSON.parse(json.data) : json.data).toEqual([])
  })

  test('each export is in the audit: who, what and which period', async () => {
    await GET(exportPath('Ledger', { from: today(), to: tomorrow(), key: key.id, format: 'json' }), alice)
    // The key's ledger was exported for several periods in this file: the JSON export of today's is among them.
    const { data } = await GET(`${OP}/AuditLog?$filter=action eq 'export.ledger' and target eq 'key:${key.id}'&$orderby=sequence desc`, alice)
    const periods = data.value.map((entry: any) => ({ actor: entry.actor, after: JSON.parse(entry.after) }))
    expect(periods).toContainEqual({ actor: 'alice', after: { from: `${today()}T00:00:00.000Z`, to: `${tomorrow()}T00:00:00.000Z`, key: key.id, format: 'json' } })
    const audit = await GET(exportPath('Audit', { from: today(), to: tomorrow(), key: key.id }), alice)
    expect(records(audit.data).some(row => row.action === 'export.ledger' && row.actor === 'alice')).toBe(true)
  })
})

describe('bad parameters: 400 with a code naming the problem', () => {
  test.each([
    ['from after to', { from: '2026-11-02', to: '2026-11-01' }, 'INVALID_PERIOD', 'from'],
    ['from equal to to', { from: '2026-11-01', to: '2026-11-01' }, 'INVALID_PERIOD', 'from'],
    ['a period over 92 days', { from: '2026-01-01', to: '2026-06-01' }, 'PERIOD_TOO_LONG', 'to'],
    ['an unknown format', { from: '2026-11-01', to: '2026-11-02', format: 'xlsx' }, 'UNKNOWN_FORMAT', 'format'],
    ['a key id that is no UUID', { from: '2026-11-01', to: '2026-11-02', key: 'cag_secret' }, 'INVALID_KEY_ID', 'key'],
    ['a time that is none', { from: 'yesterday', to: '2026-11-02' }, 'INVALID_TIME', 'from'],
    ['a time without its zone', { from: '2026-11-01T10:00', to: '2026-11-02' }, 'INVALID_TIME', 'from'],
    ['no from', { to: '2026-11-02' }, 'MISSING_PARAMETER', 'from'],
  ])('%s', async (_case, parameters, code, target) => {
    for (const dataset of ['Ledger', 'Usage', 'Audit']) {
      const { data, status } = await GET(exportPath(dataset, parameters as Record<string, string>), alice)
      expect(data.error).toMatchObject({ code, target })
      expect(data.error.message).toContain(target)
      expect(status).toBe(400)
    }
  })

  test('an Accept header that excludes the format: 406 with a code, nothing exported or audited', async () => {
    const audited = async () => (await GET(`${OP}/AuditLog?$filter=action eq 'export.ledger'&$count=true&$top=0`, alice)).data['@odata.count']
    const before = await audited()
    const { data, status } = await GET(exportPath('Ledger', { from: '2026-11-01', to: '2026-11-02' }), { ...alice, headers: { accept: 'application/json' } })
    expect(data.error.code).toBe('NOT_ACCEPTABLE')
    expect(status).toBe(406)
    expect(await audited()).toBe(before)
  })

  test('a key that does not exist: 404 KEY_NOT_FOUND', async () => {
    const { data, status } = await GET(exportPath('Ledger', { from: '2026-11-01', to: '2026-11-02', key: cds.utils.uuid() }), alice)
    expect(data.error.code).toBe('KEY_NOT_FOUND')
    expect(status).toBe(404)
  })
})

describe('who reaches the exports', () => {
  test.each([
    `${OP}/exportLedger(from='2026-11-01',to='2026-11-02')`,
    `${OP}/exportUsage(from='2026-11-01',to='2026-11-02',format='json')`,
    `${OP}/exportAudit(from='2026-11-01',to='2026-11-02')`,
    '/odata/v4/Operator/exportLedger(from=\'2026-11-01\',to=\'2026-11-02\')',
    '//odata/v4/operator/exportLedger(from=\'2026-11-01\',to=\'2026-11-02\')',
    '/odata/v4/%6Fperator/exportLedger(from=\'2026-11-01\',to=\'2026-11-02\')',
    '/odata/v4/chaina-odata/../operator/exportLedger(from=\'2026-11-01\',to=\'2026-11-02\')',
    `${OP}/OperatorService.exportLedger(from='2026-11-01',to='2026-11-02')`,
    `${OP}/Usage`,
  ])('an API key on %s: refused, no rows, charged nothing', async path => {
    const key = await issueTestKey({ units: 50 })
    const answer = await rawRequest(app.url, 'GET', path, { authorization: `Bearer ${key.key}` })
    expect(JSON.parse(answer.body).error.code).toMatch(/^(OPERATOR_ONLY|ROUTE_NOT_FORWARDED|AMBIGUOUS_PATH)$/)
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.status).toBeLessThan(500)
    expect(answer.headers['x-access-units-charged']).toBe('0')
  })

  test('no login: 401', async () => {
    const { status } = await GET(`${OP}/exportLedger(from='2026-11-01',to='2026-11-02')`)
    expect(status).toBe(401)
  })
})

describe('a busy key\'s month, streamed', () => {
  const ROWS = 25_000
  /** Rows share their time seven by seven, so page boundaries (every 1000 rows) fall inside groups of equal time. */
  const SAME_TIME = 7
  const start = Date.parse('2026-03-01T00:00:00.000Z')
  let key: { id: string }
  const pages: number[] = []

  beforeAll(async () => {
    key = await issueTestKey({ units: 10 })
    const { LedgerEntries } = cds.entities('gateway')
    const entries = Array.from({ length: ROWS }, (_, i) => ({
      ID: cds.utils.uuid(), apiKey_ID: key.id, kind: 'charge', units: -1, state: i % 10 ? 'committed' : 'refunded', routeClass: 'entity-read',
      route: i === 3 ? 'GET /odata/v4/chaina-odata/Blocks?$filter=a eq "b, c"\nnext' : 'GET /odata/v4/chaina-odata/Blocks', requestId: `busy-${i}`, outcome: '200',
      note: i === 5 ? '=HYPERLINK("http://evil.example","x")' : null,
      createdAt: new Date(start + Math.floor(i / SAME_TIME) * 60_000).toISOString(),
    }))
    for (let at = 0; at < ROWS; at += 5000) await cds.tx(() => INSERT.into(LedgerEntries).entries(entries.slice(at, at + 5000)))
    // Each page takes a little while, as a database across the network does (SQLite in memory answers
    // at once, and the server could read every page before the client's socket is ever read).
    cds.db.before('READ', 'OperatorService.LedgerEntries', async req => {
      pages.push(Number((req.query as any).SELECT.limit?.rows?.val))
      await new Promise(resolve => setTimeout(resolve, 20))
    })
  }, 120_000)

  beforeEach(() => {
    pages.length = 0
  })

  test.each(['csv', 'json'])('%s: every row once, in bounded pages, the first bytes sent before the last page is read', async format => {
    const answer = await download(exportPath('Ledger', { from: '2026-03-01', to: '2026-03-31', key: key.id, format }), () => pages.length)
    expect(answer.status).toBe(200)
    const rows = format === 'csv' ? records(answer.body) : JSON.parse(answer.body)
    expect(rows.length).toBe(ROWS)
    expect(new Set(rows.map((row: any) => row.requestId)).size).toBe(ROWS)
    const outOfOrder = rows.filter((row: any, i: number) => i && (rows[i - 1].createdAt > row.createdAt || (rows[i - 1].createdAt === row.createdAt && rows[i - 1].ID >= row.ID)))
    expect(outOfOrder).toEqual([])
    expect(pages.length).toBe(Math.ceil(ROWS / 1000) + (ROWS % 1000 ? 0 : 1))
    expect(Math.max(...pages)).toBe(1000)
    expect(answer.pagesAtFirstBytes).toBeGreaterThan(0)
    expect(answer.pagesAtFirstBytes).toBeLessThanOrEqual(3)
    const quoted = rows.find((row: any) => row.requestId === 'busy-3')
    expect(quoted.route).toBe('GET /odata/v4/chaina-odata/Blocks?$filter=a eq "b, c"\nnext')
    const formula = rows.find((row: any) => row.requestId === 'busy-5')
    expect(formula.note).toBe(format === 'csv' ? '\'=HYPERLINK("http://evil.example","x")' : '=HYPERLINK("http://evil.example","x")')
  }, 120_000)

  test('a download broken off by its client: the server stops reading pages, and the export is not recorded', async () => {
    const audited = async () => (await GET(`${OP}/AuditLog?$filter=action eq 'export.ledger' and target eq 'key:${key.id}'&$count=true&$top=0`, alice)).data['@odata.count']
    const before = await audited()
    await new Promise<void>((resolve, reject) => {
      const sent = request(`${app.url}${exportPath('Ledger', { from: '2026-03-01', to: '2026-03-31', key: key.id })}`, { headers: { authorization: ALICE_BASIC } }, answer => {
        answer.once('data', () => {
          sent.destroy()
          resolve()
        })
      })
      sent.on('error', error => (error.message.includes('socket hang up') || (error as { code?: string }).code === 'ECONNRESET' ? undefined : reject(error)))
      sent.end()
    })
    await new Promise(resolve => setTimeout(resolve, 1000))
    expect(pages.length).toBeLessThan(Math.ceil(ROWS / 1000) / 2)
    expect(await audited()).toBe(before)
  })

  test('a whole download is recorded once', async () => {
    const audited = async () => (await GET(`${OP}/AuditLog?$filter=action eq 'export.ledger' and target eq 'key:${key.id}'&$count=true&$top=0`, alice)).data['@odata.count']
    const before = await audited()
    const answer = await download(exportPath('Ledger', { from: '2026-03-01', to: '2026-03-31', key: key.id }), () => pages.length)
    expect(answer.status).toBe(200)
    expect(await audited()).toBe(before + 1)
  }, 60_000)

  test('a period that ends inside the rows: exactly the rows before its end', async () => {
    const end = new Date(start + 100 * 60_000).toISOString()
    const answer = await download(exportPath('Ledger', { from: '2026-03-01', to: end, key: key.id }), () => pages.length)
    expect(records(answer.body).length).toBe(100 * SAME_TIME)
  })

  test('the usage export of that month: one row per day', async () => {
    const { data } = await GET(exportPath('Usage', { from: '2026-03-01', to: '2026-04-01', key: key.id }), alice)
    const rows = records(data)
    expect(rows.reduce((sum, row) => sum + Number(row.calls), 0)).toBe(ROWS)
    expect(rows.reduce((sum, row) => sum + Number(row.unitsRefunded), 0)).toBe(ROWS / 10)
    expect(rows.map(row => row.day)).toEqual([...new Set(rows.map(row => row.day))].sort())
  })
})

describe('CSV cells', () => {
  test.each([
    [null, false, ''],
    ['plain', true, 'plain'],
    ['a,b', true, '"a,b"'],
    ['say "hi"', true, '"say ""hi"""'],
    ['two\nlines', true, '"two\nlines"'],
    ['=1+2', true, '\'=1+2'],
    ['+1', true, '\'+1'],
    ['-1', true, '\'-1'],
    ['@SUM(A1)', true, '\'@SUM(A1)'],
    ['=a,"b"', true, '"\'=a,""b"""'],
    [-5, false, '-5'],
  ])('%j (text: %s) is written %j', (value, text, cell) => {
    expect(csvCell(value, text)).toBe(cell)
  })
})
