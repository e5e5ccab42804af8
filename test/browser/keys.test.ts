import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { control, eventually, gotoPortal, openPortal, type Portal } from '../support/browser.ts'

/**
 * The portal's Keys page in Chromium against `npm start` on the devnets, as a person clicks
 * through it with the development wallet: sign in, see and copy the key once, make a metered call
 * and watch the units and the chart change, redeem a voucher, buy and top up a pack paid by the
 * wallet over x402, rotate and revoke.
 */

let portal: Portal
const root = join(__dirname, '..', '..')

beforeAll(async () => {
  portal = await openPortal()
}, 180_000)

afterAll(async () => {
  await portal?.close()
}, 60_000)

const page = () => portal.page
const text = (id: string) => control(page(), id).innerText()
const heldKey = () => page().evaluate(() => (globalThis as any).sessionStorage.getItem('cag.portal.key') as string | null)

/** The units-used bars of the usage chart, as Chart.js holds them. */
const usageBars = () => page().evaluate(() => {
  const element = (globalThis as any).document.querySelector('[id$="--usageChart"]')
  const chart = (globalThis as any).sap.ui.getCore().byId(element.id).getChart()
  return chart ? (chart.data.datasets[0].data as number[]) : []
})

const unitsLeft = async () => Number((await text('unitsLeft')).replace(/[^\d]/g, ''))

async function keyShownOnce(): Promise<{ key: string; configuration: any }> {
  const dialog = control(page(), 'keyOnceDialog')
  await dialog.waitFor({ state: 'visible', timeout: 120_000 })
  const key = (await text('newKeyText')).trim()
  const configuration = JSON.parse(await control(page(), 'mcpConfigText').locator('textarea').inputValue())
  return { key, configuration }
}

async function saveKey() {
  await control(page(), 'keySavedButton').click()
  await control(page(), 'keyOnceDialog').waitFor({ state: 'hidden' })
}

function voucherCode(units: number): string {
  const run = spawnSync('npm', ['run', '-s', 'gateway', '--', 'vouchers', 'create', '--units', String(units), '--count', '1', '--quiet'], { cwd: root, env: portal.env, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(run.stderr)
  return run.stdout.trim()
}

test('the page is served at / with a content security policy, free of charge', async () => {
  const response = await page().request.get('/')
  expect(response.status()).toBe(200)
  expect(response.headers()['content-security-policy']).toContain("script-src 'self'")
  expect(response.headers()['x-access-units-charged']).toBe('0')
})

test('sign in with the development wallet: the key is shown once with its MCP configuration, and copied', async () => {
  await gotoPortal(page())
  await control(page(), 'walletSelect').waitFor()
  await eventually(() => text('walletSelect'), value => expect(value).toContain('Devnet wallet 1'))
  await portal.screenshot('keys-get-a-key')
  await control(page(), 'signInButton').click()
  const shown = await keyShownOnce()
  expect(shown.key).toMatch(/^cag_/)
  expect(shown.configuration.mcpServers['chain-a']).toMatchObject({ command: 'npx', args: ['--prefix', expect.any(String), 'cag-mcp-chain-a'], env: { CHAIN_ACCESS_API_KEY: shown.key, CHAIN_ACCESS_URL: portal.server.url } })
  expect(await text('curlText')).toContain(`${portal.server.url}/me`)
  await portal.screenshot('keys-shown-once')
  await control(page(), 'copyKeyButton').click()
  await eventually(() => page().evaluate(() => (globalThis as any).navigator.clipboard.readText()), value => expect(value).toBe(shown.key))
  await saveKey()
  expect(await heldKey()).toBe(shown.key)
  await control(page(), 'accountPanel').waitFor()
  await eventually(() => text('keyPlan'), value => expect(value).toContain('trial'))
  // The wallet's keys are listed under its session.
  await eventually(() => control(page(), 'walletKeysTable').locator('tbody tr.sapMListTblRow:not(.sapMListTblRowNoData)').count(), value => expect(value).toBe(1))
})

test('a metered call: units go down by its price and the usage chart shows it', async () => {
  const before = await unitsLeft()
  const barsBefore = await usageBars()
  await control(page(), 'tryCallButton').click()
  await eventually(unitsLeft, value => expect(value).toBe(before - 1))
  await eventually(async () => (await usageBars()).at(-1), value => expect(value).toBe((barsBefore.at(-1) ?? 0) + 1))
  await eventually(() => control(page(), 'lastCallsTable').innerText(), value => expect(value).toContain('GET /odata/v4/chaina-odata/Blocks'))
  await portal.screenshot('keys-usage')
})

test('redeem a voucher: with a key held it tops that key up', async () => {
  const before = await unitsLeft()
  await control(page(), 'voucherCode').locator('input').fill(voucherCode(2000))
  await control(page(), 'redeemButton').click()
  await eventually(unitsLeft, value => expect(value).toBe(before + 2000))
  expect(await text('keysMessage')).toContain('2000 units added')
})

test('buy a pack paid by the development wallet over x402: a new key, then a top-up of it', async () => {
  await control(page(), 'forgetButton').click()
  expect(await heldKey()).toBeNull()
  await control(page(), 'buyButton').click()
  const bought = await keyShownOnce()
  await portal.screenshot('keys-bought')
  await saveKey()
  expect(await heldKey()).toBe(bought.key)
  await eventually(unitsLeft, value => expect(value).toBe(10000))
  expect(await text('keyBoundAddress')).toMatch(/^addr_test1/)

  await control(page(), 'topUpButton').click()
  await eventually(unitsLeft, value => expect(value).toBe(20000), 120_000)
}, 240_000)

test('rotate gives a new secret shown once; revoke ends the key', async () => {
  const old = await heldKey()
  await control(page(), 'rotateButton').click()
  await page().locator('.sapMDialog').getByRole('button', { name: 'Rotate' }).click()
  const rotated = await keyShownOnce()
  expect(rotated.key).not.toBe(old)
  await saveKey()
  await eventually(unitsLeft, value => expect(value).toBe(20000))

  await control(page(), 'revokeButton').click()
  await page().locator('.sapMDialog').getByRole('button', { name: 'Revoke' }).click()
  await eventually(heldKey, value => expect(value).toBeNull())
  expect(await text('keysMessage')).toContain('revoked')
  const me = await page().request.get('/me', { headers: { Authorization: `Bearer ${rotated.key}` } })
  expect(me.status()).toBe(401)
})

test('nothing went wrong on the page: no console errors, no content-security-policy violations, no server errors', () => {
  expect(portal.problems).toEqual([])
})
