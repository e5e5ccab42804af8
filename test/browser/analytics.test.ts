import { control, eventually, gotoPortal, holdKey, issueKey, openPortal, type Portal } from '../support/browser.ts'

/**
 * The portal's Analytics page in Chromium against `npm start` on the devnets, as a person uses
 * it: without a key it says where to get one; with a key it shows both chains now and the key
 * figures of a window, compares one metric across both chains as a chart and a table, and reads
 * everything again over another window, every read an OData request of the analytics service.
 */

let portal: Portal

beforeAll(async () => {
  portal = await openPortal()
}, 120_000)

afterAll(async () => {
  await portal?.close()
}, 60_000)

const page = () => portal.page
const text = (id: string) => control(page(), id).innerText()

/** What a Chart control (found by its element) holds: its labels and its datasets' labels. */
const chartOf = (selector: string) => page().evaluate(found => {
  const element = (globalThis as any).document.querySelector(found)
  const chart = element && (globalThis as any).sap.ui.getCore().byId(element.id)?.getChart()
  return chart ? { labels: chart.data.labels.length as number, datasets: chart.data.datasets.map((dataset: any) => dataset.label as string) } : null
}, selector)

/** The analytics requests the page sent, as its Requests dialog lists them. */
async function requestsShown(): Promise<string> {
  await control(page(), 'showRequestsButton').click()
  const table = control(page(), 'requestLogTable')
  await table.waitFor({ state: 'visible' })
  const shown = await table.innerText()
  await control(page(), 'requestLogDialog').getByRole('button', { name: 'Close' }).click()
  await control(page(), 'requestLogDialog').waitFor({ state: 'hidden' })
  return shown
}

/** Presses Refresh until `check` holds: the followers index their first blocks shortly after the server starts. */
async function refreshUntil(check: () => Promise<boolean>) {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 30) throw new Error('the analytics page never showed what was expected')
    await page().waitForTimeout(3000)
    await control(page(), 'analyticsRefresh').click()
  }
}

test('without a key the page says where to get one, and reads nothing', async () => {
  await gotoPortal(page(), '#/analytics')
  const strip = control(page(), 'analyticsNoKey')
  await strip.waitFor({ state: 'visible' })
  expect(await strip.innerText()).toContain('Get a key on the Keys tab to read analytics')
  expect(await control(page(), 'analyticsContent').isVisible()).toBe(false)
  expect(await requestsShown()).not.toContain('/odata/v4/analytics')
  await control(page(), 'analyticsKeysLink').click()
  await eventually(async () => page().url(), value => expect(value).not.toContain('analytics'))
})

test('open analytics: both chains now and the key figures of the last hour', async () => {
  await holdKey(page(), issueKey(portal, 100000))
  await gotoPortal(page())
  await control(page(), 'tabAnalytics').click()
  await control(page(), 'analyticsContent').waitFor({ state: 'visible' })
  expect(await control(page(), 'analyticsNoKey').isVisible()).toBe(false)

  const indexed = async () => [await text('overviewA--panel'), await text('overviewB--panel')].every(card => /Tip height\s+\d+/.test(card) && /Indexed height\s+\d+/.test(card))
  await refreshUntil(indexed)
  expect(await text('overviewA--title')).toContain('Chain A')
  expect(await text('overviewB--title')).toContain('Chain B')
  expect(await text('overviewA--panel')).toMatch(/Fees \(24 h\)\s+[\d.]+[KMBT]?\s*lovelace/)

  // The key figures: a card per metric, each with both chains' series over the 60 minutes.
  const cards = control(page(), 'keyFiguresGrid').locator('.cagChart')
  await eventually(() => cards.count(), value => expect(value).toBe(8))
  const first = await chartOf('[id$="--keyFiguresGrid"] .cagChart')
  expect(first).toEqual({ labels: 60, datasets: ['Chain A (Cardano)', 'Chain B (Midnight)'] })
  expect(await text('windowSpan')).toContain('the last 60 complete minutes')
  await portal.screenshot('analytics-overview')
})

test('compare one metric across both chains: two series side by side and a table of the figures', async () => {
  await control(page(), 'tabCompare').click()
  await control(page(), 'compareMetric').click()
  await page().getByRole('option', { name: 'fee.total', exact: true }).click()
  await control(page(), 'compareButton').click()

  await eventually(() => text('compareDescription'), value => expect(value).toContain('fee.total'))
  await eventually(() => chartOf('[id$="--compareChart"]'), value => expect(value).toEqual({ labels: 60, datasets: ['Chain A (Cardano)', 'Chain B (Midnight)'] }))
  const rows = control(page(), 'compareTable').locator('tbody tr.sapMListTblRow:not(.sapMListTblRowNoData)')
  await eventually(() => rows.count(), value => expect(value).toBe(2))
  expect(await rows.nth(0).innerText()).toMatch(/Chain A \(Cardano\)[\s\S]*\d[\s\S]*lovelace/)
  expect(await rows.nth(1).innerText()).toMatch(/Chain B \(Midnight\)[\s\S]*\d[\s\S]*DUST/)
  expect(await requestsShown()).toContain("/odata/v4/analytics/compare(metric='fee.total',window='1h')")
  await control(page(), 'analyticsTabs').evaluate(element => element.scrollIntoView())
  await portal.screenshot('analytics-compare')
})

test('another window reads the figures again over it', async () => {
  await control(page(), 'analyticsWindow').getByText('7 days').click()
  // The tab shown is read again at once (by day now), the key figures when they are shown.
  await eventually(() => chartOf('[id$="--compareChart"]').then(chart => chart?.labels), value => expect(value).toBe(7))
  await control(page(), 'tabKeyFigures').click()
  await eventually(() => chartOf('[id$="--keyFiguresGrid"] .cagChart').then(chart => chart?.labels), value => expect(value).toBe(7))
  expect(await text('windowSpan')).toContain('the last 7 complete UTC days')
  const shown = await requestsShown()
  expect(shown).toContain("/odata/v4/analytics/compare(metric='fee.total',window='7d')")
  expect(shown).toContain("/odata/v4/analytics/keyFigures(window='7d')")
})

test('nothing went wrong on the page: no console errors, no content-security-policy violations, no server errors', () => {
  expect(portal.problems).toEqual([])
})
