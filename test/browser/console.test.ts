import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { control, eventually, openPortal, SCREENSHOTS, type Portal } from '../support/browser.ts'

/**
 * The operator console in Chromium against `npm start` (the hosted gateway on, the devnets
 * embedded), as an operator clicks through it signed in as the development operator `alice`:
 * issue a key and find it, credit it, change its plan; edit a price through its draft and see the
 * next metered call charged the new price; revoke the key; create vouchers; create a plan from a
 * draft; and find each of these in the audit log. Every list, filter, section and button comes from the operator
 * service's annotations.
 */

let portal: Portal
const root = join(__dirname, '..', '..')
const LABEL = `console-test-${Date.now()}`

beforeAll(async () => {
  portal = await openPortal({ httpCredentials: { username: 'alice', password: '' } })
}, 180_000)

afterAll(async () => {
  await portal?.close()
}, 60_000)

const page = () => portal.page
const text = (id: string) => control(page(), id).innerText()
const rows = () => page().locator('[id$="--table"] tbody tr.sapMListTblRow:not(.sapMListTblRowNoData)')
const digits = (value: string) => Number(value.replace(/[^\d]/g, ''))

/**
 * The screenshot saved under the test's artifacts; with DOCS_SCREENSHOTS=1 also copied to
 * docs/images, where the README shows it (`DOCS_SCREENSHOTS=1 npx jest test/browser/console.test.ts`).
 */
async function documented(name: string) {
  await portal.screenshot(name)
  if (process.env.DOCS_SCREENSHOTS !== '1') return
  mkdirSync(join(root, 'docs', 'images'), { recursive: true })
  copyFileSync(join(SCREENSHOTS, `${name}.png`), join(root, 'docs', 'images', `${name}.png`))
}

/** Opens a list of the console by its entity set, and waits until that list (not the one shown before) has its rows. */
async function openList(set: string, title = set) {
  await page().goto(`/console#/${set}`)
  await control(page(), 'table').waitFor({ timeout: 60_000 })
  await eventually(() => text('tableTitle'), value => expect(value).toMatch(new RegExp(`^${title} \\(\\d+\\)$`)))
}

/** Picks a value of an open select (a value list) by its text. */
async function pick(selectId: string, value: string) {
  await control(page(), selectId).click()
  await page().locator('.sapMSelectList li:visible', { hasText: new RegExp(`^${value}$`) }).click()
}

/** Runs an action from its button: its parameters filled in its dialog, then confirmed. */
async function runAction(buttonId: string, fill: () => Promise<void>) {
  await control(page(), buttonId).click()
  await control(page(), 'actionDialog').waitFor()
  // The dialog moves the focus to its first field once it has opened (later on a busy machine):
  // text typed before that could land in the first field.
  await eventually(() => page().evaluate(() => Boolean((globalThis as any).document.activeElement?.closest('[id$="--actionDialog"]'))), focused => expect(focused).toBe(true))
  await fill()
  await control(page(), 'actionConfirm').click()
  await control(page(), 'actionDialog').waitFor({ state: 'detached' })
}

const input = (id: string) => control(page(), id).locator('input')

/** Fills the fields, then checks each holds its value (filling again any that does not). */
async function fillFields(values: Record<string, string>) {
  for (const [id, value] of Object.entries(values)) await input(id).fill(value)
  await eventually(async () => {
    const held: Record<string, string> = {}
    for (const [id, value] of Object.entries(values)) {
      held[id] = await input(id).inputValue()
      if (held[id] !== value) await input(id).fill(value)
    }
    return held
  }, held => expect(held).toEqual(values))
}

/** A metered call with the key through the hosted gateway: the units it was charged. */
async function meteredCall(key: string): Promise<string | null> {
  const response = await fetch(`${portal.server.url}/odata/v4/chaina-odata/Blocks?$top=1`, { headers: { authorization: `Bearer ${key}` } })
  await response.arrayBuffer()
  expect(response.status).toBe(200)
  return response.headers.get('x-access-units-charged')
}

let key: string
let keyId: string

test('the Keys list: filters and columns from the annotations; Issue Key shows the key once', async () => {
  await openList('Keys')
  for (const filter of ['filter-status', 'filter-plan_name', 'filter-label', 'filter-boundAddress']) await control(page(), filter).waitFor()
  const header = await control(page(), 'table').locator('thead').innerText()
  for (const column of ['Key', 'Label', 'Plan', 'Status', 'Units Left']) expect(header).toContain(column)
  await runAction('listAction-issueKey', async () => {
    await pick('param-plan', 'standard')
    await fillFields({ 'param-units': '500', 'param-label': LABEL })
  })
  await control(page(), 'answerDialog').waitFor()
  key = (await text('answer-key')).trim()
  keyId = (await text('answer-ID')).trim()
  expect(key).toMatch(/^cag_/)
  expect(await control(page(), 'answer-mcpConfiguration').locator('textarea').inputValue()).toContain(key)
  await control(page(), 'answerClose').click()
  await control(page(), 'answerDialog').waitFor({ state: 'detached' })
  await eventually(() => rows().first().innerText(), value => expect(value).toContain(LABEL))
  await documented('console-keys')
})

test('find the key by its label, credit it and change its plan on its object page', async () => {
  await input('filter-label').fill(LABEL)
  await control(page(), 'goButton').click()
  await eventually(() => rows().count(), value => expect(value).toBe(1))
  await rows().first().click()
  await eventually(() => text('field-ID'), value => expect(value).toBe(keyId))
  expect(digits(await text('field-unitsLeft'))).toBe(500)

  await runAction('action-credit', async () => {
    await fillFields({ 'param-units': '250', 'param-reason': 'goodwill' })
  })
  await eventually(async () => digits(await text('field-unitsLeft')), value => expect(value).toBe(750))

  await runAction('action-changePlan', async () => {
    await pick('param-plan', 'scale')
    await input('param-reason').fill('upgrade')
  })
  await eventually(() => text('field-plan_name'), value => expect(value).toBe('scale'))
})

test('a price edited through its draft: cancelled, nothing changes; saved, the next metered call is charged the new price', async () => {
  expect(await meteredCall(key)).toBe('1')
  await openList('Prices')
  await rows().filter({ hasText: 'entity-read' }).click()
  await eventually(() => text('objectTitle'), value => expect(value).toBe('entity-read'))

  await control(page(), 'editButton').click()
  await control(page(), 'saveButton').waitFor()
  await eventually(() => input('field-units').inputValue(), value => expect(value).toBe('1'))
  await input('field-units').fill('9')
  await control(page(), 'cancelButton').click()
  await control(page(), 'editButton').waitFor()
  await eventually(() => text('field-units'), value => expect(value).toBe('1'))

  await control(page(), 'editButton').click()
  await control(page(), 'saveButton').waitFor()
  // The draft's fields fill once it is read: typing before would be overwritten.
  await eventually(() => input('field-units').inputValue(), value => expect(value).toBe('1'))
  await input('field-units').fill('4')
  await input('field-description').click()
  await documented('console-price-edit')
  await control(page(), 'saveButton').click()
  await control(page(), 'editButton').waitFor()
  await eventually(() => text('field-units'), value => expect(value).toBe('4'))
  // Every instance reads the prices again within seconds: the next calls are charged 4 units.
  await eventually(() => meteredCall(key), charged => expect(charged).toBe('4'), 20_000)
})

test('revoke the key: its object page says so, and the key answers 401', async () => {
  await page().goto(`/console#/Keys/${keyId}`)
  await eventually(() => text('field-ID'), value => expect(value).toBe(keyId))
  await runAction('action-revoke', () => input('param-reason').fill('customer left'))
  await eventually(() => text('field-status'), value => expect(value).toBe('revoked'))
  const me = await fetch(`${portal.server.url}/me`, { headers: { authorization: `Bearer ${key}` } })
  expect(me.status).toBe(401)
})

test('create vouchers from the Vouchers list: the codes shown once as CSV, the list shows them by their hints', async () => {
  await openList('Vouchers')
  await runAction('listAction-createVouchers', async () => {
    await fillFields({ 'param-units': '100', 'param-count': '3', 'param-label': LABEL })
  })
  await control(page(), 'answerDialog').waitFor()
  const csv = (await control(page(), 'answer-csv').locator('textarea').inputValue()).trim().split(/\r?\n/)
  expect(csv[0]).toBe('id,code,units,uses,expiresAt,label')
  expect(csv.slice(1)).toHaveLength(3)
  const hints = csv.slice(1).map(line => line.split(',')[1].slice(0, 4))
  await control(page(), 'answerClose').click()
  await input('filter-label').fill(LABEL)
  await control(page(), 'goButton').click()
  await eventually(() => rows().count(), value => expect(value).toBe(3))
  const listed = await rows().allInnerTexts()
  for (const hint of hints) expect(listed.join('\n')).toContain(hint)
})

test('a plan created from the Plans list: a draft filled in and saved; prices have no Create', async () => {
  await openList('Prices')
  expect(await control(page(), 'listCreate').count()).toBe(0)
  await openList('Plans')
  await runAction('listCreate', () => input('param-name').fill('console-team'))
  await eventually(() => text('field-name'), value => expect(value).toBe('console-team'))
  await control(page(), 'draftStatus').waitFor()
  for (const [field, value] of [['units', '5000'], ['validityDays', '30'], ['ratePerSecond', '10'], ['burst', '20']]) await input(`field-${field}`).fill(value)
  await input('field-description').click()
  await control(page(), 'saveButton').click()
  await control(page(), 'editButton').waitFor()
  await eventually(() => text('field-burst'), value => expect(value).toBe('20'))
  await control(page(), 'backButton').click()
  await eventually(async () => (await rows().allInnerTexts()).join('\n'), listed => expect(listed).toContain('console-team'))
})

test('the audit log lists each of these, newest first, by alice', async () => {
  await openList('AuditLog', 'Audit Log')
  await input('filter-target').fill(keyId)
  await control(page(), 'goButton').click()
  await eventually(async () => (await rows().allInnerTexts()).map(row => row.match(/key\.[a-z-]+/)?.[0]), actions => expect(actions).toEqual(['key.revoke', 'key.change-plan', 'key.credit', 'key.issue']))
  expect((await rows().allInnerTexts()).every(row => row.includes('alice'))).toBe(true)
  await input('filter-target').fill('price:entity-read')
  await control(page(), 'goButton').click()
  await eventually(() => rows().allInnerTexts(), texts => expect(texts.filter(row => row.includes('price.update'))).toHaveLength(1))
  await input('filter-target').fill('plan:console-team')
  await control(page(), 'goButton').click()
  await eventually(async () => (await rows().allInnerTexts()).map(row => row.match(/plan\.[a-z]+/)?.[0]), actions => expect(actions).toEqual(['plan.create']))
  await input('filter-target').fill('vouchers:3')
  await input('filter-action').fill('voucher.create')
  await control(page(), 'goButton').click()
  await eventually(() => rows().count(), value => expect(value).toBeGreaterThanOrEqual(1))
})

test('nothing went wrong on the page: no console errors, no content-security-policy violations, no server errors', () => {
  expect(portal.problems).toEqual([])
})
