import cds from '@sap/cds'
import { request } from 'node:http'
import { issueTestKey } from '../support/gateway.ts'

/**
 * On PostgreSQL an export holds up no other operator action while it streams: its audit entry (and
 * with it the audit's head) is written only after its last page is read, so a credit made in the
 * middle of a long download is answered before the download ends.
 */
const app = cds.test(__dirname + '/../..') as any
const { POST, defaults } = app
defaults.validateStatus = () => true

const OP = '/odata/v4/operator'
const alice = { auth: { username: 'alice', password: '' } }
const ROWS = 20_000

test('a credit in the middle of a long export is answered before the export ends', async () => {
  const busy = await issueTestKey({ units: 10 })
  const other = await issueTestKey({ units: 10 })
  const { LedgerEntries } = cds.entities('gateway')
  const start = Date.parse('2026-05-01T00:00:00.000Z')
  const entries = Array.from({ length: ROWS }, (_, i) => ({
    ID: cds.utils.uuid(), apiKey_ID: busy.id, kind: 'charge', units: -1, state: 'committed', routeClass: 'entity-read',
    route: 'GET /odata/v4/chaina-odata/Blocks', requestId: `long-${i}`, outcome: '200', createdAt: new Date(start + i * 1000).toISOString(),
  }))
  for (let at = 0; at < ROWS; at += 5000) await cds.tx(() => INSERT.into(LedgerEntries).entries(entries.slice(at, at + 5000)))
  // Each page takes a while, so the download lasts about a second.
  cds.db.before('READ', 'OperatorService.LedgerEntries', () => new Promise(resolve => setTimeout(resolve, 50)))

  const events: string[] = []
  const download = new Promise<number>((resolve, reject) => {
    const path = `${OP}/exportLedger(from='2026-05-01',to='2026-06-01',key='${busy.id}')`
    const sent = request(`${app.url}${path}`, { headers: { authorization: `Basic ${Buffer.from('alice:').toString('base64')}` } }, answer => {
      let bytes = 0
      answer.on('data', chunk => {
        if (!bytes) events.push('export started')
        bytes += chunk.length
      })
      answer.on('end', () => {
        events.push('export ended')
        resolve(bytes)
      })
    })
    sent.on('error', reject)
    sent.end()
  })
  while (!events.length) await new Promise(resolve => setTimeout(resolve, 10))
  const credit = await POST(`${OP}/Keys(${other.id})/OperatorService.credit`, { units: 5, reason: 'during an export' }, alice)
  events.push('credit answered')
  expect(credit.data.unitsLeft).toBe('15')
  expect(await download).toBeGreaterThan(ROWS * 50)
  expect(events).toEqual(['export started', 'credit answered', 'export ended'])
}, 120_000)
