import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { startServer, stopAndWait, type RunningServer } from './server.ts'

/**
 * The browser tests' harness: Debian's Chromium driven by playwright-core, against the server as
 * `npm start` runs it (development profile, both devnets embedded, a database of its own).
 * test/setup/system-packages.js leaves these tests out where Chromium is missing.
 */

const root = join(__dirname, '..', '..')
const { CHROMIUM } = require('../setup/system-packages.js') as { CHROMIUM: string }

/** Where screenshots go: a folder git ignores, kept after the run as the test's artifacts. */
export const SCREENSHOTS = join(root, '.artifacts', 'screenshots')

export interface Portal {
  server: RunningServer
  /** The server's environment (its database): what a command line run against it needs. */
  env: NodeJS.ProcessEnv
  browser: Browser
  context: BrowserContext
  page: Page
  /** What went wrong on the page: errors logged to the console, uncaught errors, content-security-policy violations, server errors. */
  problems: string[]
  /** Saves a screenshot of the page as `<name>.png` in SCREENSHOTS. */
  screenshot(name: string): Promise<void>
  close(): Promise<void>
}

/**
 * Starts `npm start` on a free port and a fresh database, and Chromium with one page on it; with
 * `httpCredentials`, the browser answers a login challenge (the operator's basic login in development) with them.
 */
export async function openPortal(options: { env?: NodeJS.ProcessEnv; httpCredentials?: { username: string; password: string } } = {}): Promise<Portal> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chain-access-browser-'))
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite'), ...options.env }
  for (const name of ['NODE_ENV', 'CDS_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE']) delete env[name]
  const server = await startServer('npm', ['start'], { cwd: root, env, timeoutMs: 90_000 })
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // No sandbox as root; no background traffic to hosts this machine cannot reach.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1400, height: 900 }, httpCredentials: options.httpCredentials })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', message => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text().slice(0, 500)}`)
  })
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  page.on('response', response => {
    if (response.status() >= 500) problems.push(`HTTP ${response.status()} ${response.url()}`)
  })
  mkdirSync(SCREENSHOTS, { recursive: true })
  return {
    server, env, browser, context, page, problems,
    screenshot: async name => void (await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), animations: 'disabled' })),
    close: async () => {
      await browser.close().catch(() => undefined)
      await stopAndWait(server)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Opens the portal at `hash` (e.g. `#/explorer`) and waits until UI5 rendered its tabs. */
export async function gotoPortal(page: Page, hash = ''): Promise<void> {
  await page.goto(`/${hash}`)
  await page.waitForSelector('[id$="--tabKeys"]', { timeout: 60_000 })
}

/** The element of a UI5 control by the id given in its view (ids are prefixed by the component and view). */
export const control = (page: Page, viewId: string) => page.locator(`[id$="--${viewId}"]`).first()

/** Issues a key with the operator's command line against the portal's server (same database), and answers it. */
export function issueKey(portal: Pick<Portal, 'env'>, units: number): string {
  const run = spawnSync('npm', ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', String(units), '--quiet'], { cwd: root, env: portal.env, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`issuing a key failed: ${run.stderr}`)
  return run.stdout.trim()
}

/** Makes the page hold `key` from its next load on, as the portal keeps a key (this tab's sessionStorage). */
export async function holdKey(page: Page, key: string): Promise<void> {
  await page.addInitScript(value => (globalThis as any).sessionStorage.setItem('cag.portal.key', value), key)
}

/**
 * Reads until `check` passes (jest's expect inside it), for what the page shows after a while;
 * fails with the last check's error after `timeoutMs`.
 */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => void, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let value: T
    try {
      value = await read()
      check(value)
      return value
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise(resolve => setTimeout(resolve, 250))
    }
  }
}
