import { control, eventually, gotoPortal, holdKey, issueKey, openPortal, type Portal } from '../support/browser.ts'

/**
 * The portal's Explorer in Chromium against `npm start` on the devnets, as a person clicks through
 * it: without a key it points to the Keys tab; with one it shows the tip of both chains and their
 * recent blocks and transactions, opens a block, a transaction, an address, a pool (by search), a
 * chain-B block and transaction, and a chain-B document whose attestation it verifies; the
 * Requests dialog lists the OData queries the pages sent.
 */

let portal: Portal
let key: string

beforeAll(async () => {
  portal = await openPortal()
  key = issueKey(portal, 100_000)
}, 120_000)

afterAll(async () => {
  await portal?.close()
}, 60_000)

const page = () => portal.page
/** What a control shows (its first line: ObjectNumber and ObjectStatus add hidden texts for screen readers below). */
const text = async (id: string) => (await control(page(), id).innerText()).trim().split('\n')[0].trim()
/** A table's rows of data (not the row that says there is none). */
const rows = (tableId: string) => control(page(), tableId).locator('tbody tr.sapMListTblRow:not(.sapMListTblRowNoData)')
const rowCount = (tableId: string) => rows(tableId).count()

/** Clicks Refresh on the landing until the table shows rows (the devnets make blocks every few seconds). */
async function refreshUntilRows(tableId: string, which = rows(tableId)) {
  await eventually(async () => {
    if (await which.count() === 0) {
      await control(page(), 'explorerRefresh').click()
      await page().waitForTimeout(1_000)
    }
    return which.count()
  }, count => expect(count).toBeGreaterThan(0), 60_000)
}

/** Reads with the key from the test itself (to pick a pool, to anchor a document), as a client of the API would. */
async function api(method: 'GET' | 'POST', path: string, body?: object): Promise<any> {
  const response = await fetch(portal.server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const answer = await response.json()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
  return answer
}

async function settled(jobId: string): Promise<any> {
  return eventually(() => api('POST', '/odata/v4/chainb/getJobStatus', { jobId }), job => expect(['confirmed', 'failed']).toContain(job.status), 90_000)
}

/** Searches the explorer's search field for `query` from the landing, and waits for the page it leads to. */
async function search(query: string, leadsTo: RegExp) {
  await gotoPortal(page(), '#/explorer')
  const input = control(page(), 'explorerSearch-I')
  await input.waitFor()
  await input.click()
  await input.fill(query)
  await input.press('Enter')
  await eventually(() => page().evaluate(() => (globalThis as any).location.hash as string), hash => expect(hash).toMatch(leadsTo))
}

test('without a key the explorer points to the Keys tab, sends no metered read and shows no error', async () => {
  const metered: string[] = []
  const onRequest = (request: { url(): string }) => {
    if (/\/odata\/v4\/(chaina-odata|chainb)\/(?!\$metadata)/.test(request.url())) metered.push(request.url())
  }
  page().on('request', onRequest)
  await gotoPortal(page(), '#/explorer')
  await control(page(), 'explorerNoKey').waitFor({ state: 'visible' })
  expect(await control(page(), 'explorerNoKey').innerText()).toContain('Get a key on the Keys tab')
  expect(await control(page(), 'chainABlocks').isVisible()).toBe(false)
  expect(await page().locator('.sapMDialog').count()).toBe(0)
  await portal.screenshot('explorer-no-key')
  // A detail page says the same, without reading.
  await gotoPortal(page(), '#/explorer/chain-a/block/1')
  await page().locator('[id$="explorerBlock--explorerNoKey"]').waitFor({ state: 'visible' })
  await page().locator('[id$="explorerBlock--explorerGetKeyLink"]').click()
  await control(page(), 'tabKeys').waitFor()
  await eventually(() => page().evaluate(() => (globalThis as any).location.hash), hash => expect(hash).toMatch(/^#?\/?$/))
  page().off('request', onRequest)
  expect(metered).toEqual([])
  expect(portal.problems).toEqual([])
}, 120_000)

describe('with a key', () => {
  beforeAll(async () => {
    await holdKey(page(), key)
    // The key is held from the next load of the portal.
    await page().reload()
  })

  test('the landing shows the tip of both chains and their recent blocks and transactions', async () => {
    await gotoPortal(page(), '#/explorer')
    await eventually(() => text('chainATipHeight'), value => expect(value).toMatch(/^\d[\d,]*$/), 60_000)
    await eventually(() => text('chainBTipHeight'), value => expect(value).toMatch(/^\d[\d,]*$/), 60_000)
    expect(await text('chainATipHash')).toMatch(/^[0-9a-f]{64}$/)
    expect(await text('chainATipSlot')).toMatch(/^epoch \d+ \/ slot [\d,]+$/)
    expect(await rowCount('chainABlocks')).toBeGreaterThan(0)
    expect(await rowCount('chainBBlocks')).toBeGreaterThan(0)
    // The devnets make transactions every few blocks: the recent transactions fill in (Refresh reads again).
    await refreshUntilRows('chainATransactions')
    expect(await control(page(), 'explorerNoKey').isVisible()).toBe(false)
    await portal.screenshot('explorer-landing')
  }, 120_000)

  test('a block row opens the block: its hash, its height, its transactions', async () => {
    const tipHash = await text('chainATipHash')
    const tipHeight = await text('chainATipHeight')
    await rows('chainABlocks').first().click()
    await eventually(() => text('blockHash'), value => expect(value).toBe(tipHash))
    expect(await text('blockHeight')).toBe(tipHeight)
    await control(page(), 'blockTransactions').waitFor()
    await portal.screenshot('explorer-block')
  }, 60_000)

  test('a transaction shows its inputs and outputs; an address its balance and UTxOs', async () => {
    await gotoPortal(page(), '#/explorer')
    // A transaction that spends something (the genesis transactions of block 0 have no inputs): its In / out is not "0 / …".
    const spending = rows('chainATransactions').filter({ hasNot: page().locator('td').filter({ hasText: /^\s*0 \/ \d+\s*$/ }) })
    await refreshUntilRows('chainATransactions', spending)
    await spending.first().click()
    await eventually(() => text('txHash'), value => expect(value).toMatch(/^[0-9a-f]{64}$/))
    await eventually(() => rowCount('txInputs'), count => expect(count).toBeGreaterThan(0))
    await eventually(() => rowCount('txOutputs'), count => expect(count).toBeGreaterThan(0))
    expect(await text('txFee')).toMatch(/ADA$/)
    await portal.screenshot('explorer-transaction')

    const output = rows('txOutputs').first().locator('a.sapMLnk').first()
    const address = (await output.innerText()).replace(/\s/g, '')
    await output.click()
    await eventually(async () => (await text('addressText')).replace(/\s/g, ''), value => expect(value).toBe(address))
    await eventually(() => text('addressBalance'), value => expect(value).toMatch(/ADA$/))
    await eventually(() => rowCount('addressUtxos'), count => expect(count).toBeGreaterThan(0))
    await portal.screenshot('explorer-address')
  }, 120_000)

  test('the Requests dialog lists the OData queries the explorer sent', async () => {
    await control(page(), 'showRequestsButton').click()
    const dialog = control(page(), 'requestLogDialog')
    await dialog.waitFor({ state: 'visible' })
    await dialog.getByText(/^\/odata\/v4\/chaina-odata\/Blocks\?.*\$orderby=height desc/).first().waitFor()
    await dialog.getByText(/^\/odata\/v4\/chaina-odata\/Transactions\('[0-9a-f]{64}'\)\/inputs\?/).first().waitFor()
    await portal.screenshot('explorer-requests')
    await dialog.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'hidden' })
  }, 60_000)

  test('the search opens a pool, a transaction and a block by height', async () => {
    const pool = (await api('GET', '/odata/v4/chaina-odata/Pools?$top=1&$select=poolId,ticker')).value[0]
    await search(pool.poolId, /^#\/explorer\/chain-a\/pool\//)
    await eventually(() => text('poolId'), value => expect(value).toBe(pool.poolId))
    await eventually(() => rowCount('poolDelegators'), count => expect(count).toBeGreaterThan(0))
    await portal.screenshot('explorer-pool')

    const transaction = (await api('GET', '/odata/v4/chaina-odata/Transactions?$top=1&$orderby=blockHeight desc&$select=hash')).value[0]
    await search(transaction.hash, /^#\/explorer\/chain-a\/transaction\//)
    await eventually(() => text('txHash'), value => expect(value).toBe(transaction.hash))

    await search('1', /^#\/explorer\/chain-a\/block\/1$/)
    await eventually(() => text('blockHeight'), value => expect(value).toBe('1'))
    expect(await text('blockHash')).toMatch(/^[0-9a-f]{64}$/)
  }, 120_000)

  test('a chain-B block (found by its hash) and one of its transactions', async () => {
    const block = await eventually(
      async () => (await api('GET', '/odata/v4/chainb/Blocks?$top=1&$orderby=height desc&$filter=txCount gt 0&$select=hash,height')).value[0],
      found => expect(found).toBeDefined(), 60_000)
    await search(block.hash, /^#\/explorer\/chain-b\/block\//)
    await eventually(() => text('chainBBlockHash'), value => expect(value).toBe(block.hash))
    await eventually(() => rowCount('chainBBlockTransactions'), count => expect(count).toBeGreaterThan(0))
    await rows('chainBBlockTransactions').first().click()
    await eventually(() => text('chainBTxHash'), value => expect(value).toMatch(/^[0-9a-f]{64}$/))
    expect((await text('chainBTxBlock')).replace(/,/g, '')).toBe(String(block.height))
    await portal.screenshot('explorer-chain-b-transaction')
  }, 120_000)

  test('a chain-B document with its attestation, verified on the free verify lane', async () => {
    const invoice = { id: 'INV-EXPLORER', total: 1234.5, currency: 'EUR' }
    const prepared = await api('POST', '/odata/v4/chainb/prepareDocumentProof', { documentJson: JSON.stringify(invoice), proofFieldsJson: JSON.stringify(['total', 'currency']) })
    const anchor = await api('POST', '/odata/v4/chainb/anchorDocument', {
      sha256: prepared.payloadHash, documentJson: JSON.stringify(invoice), proofFieldsJson: JSON.stringify(['total', 'currency']), saltSeed: prepared.opening.saltSeed,
      contentType: 'application/json', metadata: JSON.stringify({ title: 'Invoice INV-EXPLORER' }),
    })
    expect((await settled(anchor.jobId)).status).toBe('confirmed')
    const total = prepared.fields.find((field: any) => field.field === 'total')
    const attestation = await api('POST', '/odata/v4/chainb/issueFieldPredicateAttestation', {
      payloadHash: prepared.payloadHash, fieldKey: total.fieldKey, fieldSalt: total.salt, siblingsJson: JSON.stringify(total.siblings),
      dirsJson: JSON.stringify(total.dirs), value: total.value, scale: total.scale, predicate: 'greaterOrEqual', threshold: '1000',
    })
    expect((await settled(attestation.jobId)).status).toBe('confirmed')

    // The landing lists the caller's documents; a row opens the document.
    await gotoPortal(page(), '#/explorer')
    await refreshUntilRows('chainBDocuments')
    await rows('chainBDocuments').first().click()
    await eventually(() => text('documentPayloadHash'), value => expect(value.replace(/\s/g, '')).toBe(prepared.payloadHash))
    expect(await text('documentStatus')).toContain('anchored')

    await control(page(), 'verifyDocumentButton').click()
    await eventually(() => text('verdictStatus'), value => expect(value).toBe('verified (VALID)'))

    await eventually(() => rowCount('documentAttestations'), count => expect(count).toBe(1))
    await rows('documentAttestations').first().getByRole('button', { name: 'Verify' }).click()
    await eventually(() => control(page(), 'verdictPanel').innerText(), value => expect(value).toContain(attestation.attestationId))
    expect(await text('verdictStatus')).toBe('verified (VALID)')
    await portal.screenshot('explorer-document')
  }, 240_000)

  test('nothing went wrong on the page', () => {
    expect(portal.problems).toEqual([])
  })
})
