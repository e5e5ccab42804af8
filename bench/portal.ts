import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import cds from '@sap/cds'
import { figures, printLine, printRatio, printValue, type Figures } from './measure.ts'

/**
 * The portal's first visit in Chromium: how long until the Keys page is usable, with the preload
 * bundle against each module fetched on its own (the baseline); how many bytes cross the wire,
 * compressed as served against the same files uncompressed; a visit with the browser's cache warm;
 * and a theme compiled from its LESS sources against one served from the compile cache. Needs Debian's Chromium; without it the group says so and stops.
 */

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const READY = '[id$="--signInButton"]'

export async function portalBenchmarks({ url, rounds }: { url: string; rounds: number }) {
  console.log('portal (Chromium, the Keys page at /)')
  if (!existsSync(CHROMIUM)) return printValue('skipped', `no Chromium at ${CHROMIUM} (apt-get install chromium)`)
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run'] })
  try {
    const visits = Math.max(3, Math.min(10, Math.round(rounds / 200)))
    const cold: number[] = []
    const warm: number[] = []
    const unbundled: number[] = []
    let resources: string[] = []
    for (let i = 0; i < visits; i++) {
      // The baseline: the same first visit without the preload bundle, each module fetched on its own.
      const bare = await browser.newContext()
      await bare.route('**/portal/preload.js', route => route.fulfill({ contentType: 'application/javascript', body: '// no bundle' }))
      const barePage = await bare.newPage()
      const began = performance.now()
      await barePage.goto(url + '/')
      await barePage.waitForSelector(READY)
      unbundled.push(performance.now() - began)
      await bare.close()

      const context = await browser.newContext()
      // Every file of the visit in the resource timing list (its default holds 250).
      await context.addInitScript(() => performance.setResourceTimingBufferSize(10_000))
      const page = await context.newPage()
      let started = performance.now()
      await page.goto(url + '/')
      await page.waitForSelector(READY)
      cold.push(performance.now() - started)
      resources = await page.evaluate(() => performance.getEntriesByType('resource').map(entry => entry.name))
      started = performance.now()
      await page.reload()
      await page.waitForSelector(READY)
      warm.push(performance.now() - started)
      await context.close()
    }
    printLine(`first visit, modules one by one (baseline, ${visits} visits)`, figures(unbundled))
    printLine(`first visit until the Keys page is usable (${visits} visits)`, figures(cold))
    printRatio('first visit with the preload bundle / baseline', figures(cold), figures(unbundled))
    printLine('a later visit (the browser\'s cache warm)', figures(warm))
    printRatio('later visit / first visit', figures(warm), figures(cold))

    const files = resources.filter(name => name.startsWith(url))
    const compressed = await wireBytes(files, 'gzip')
    const plain = await wireBytes(files, 'identity')
    printValue(`bytes of a first visit (${files.length} files)`, `${mb(compressed)} compressed, ${mb(plain)} uncompressed (${(compressed / plain).toFixed(2)}x)`)

    const version = (await (await fetch(url + '/resources/sap-ui-version.json')).json()).version
    const themeDir = join(cds.root, 'node_modules/.cache/chain-access-gateway/ui5-themes', version, 'sap/m/sap_horizon_hcb')
    const compile: number[] = []
    const cached: number[] = []
    for (let i = 0; i < 3; i++) {
      rmSync(themeDir, { recursive: true, force: true })
      compile.push(await timed(() => fetch(url + '/resources/sap/m/themes/sap_horizon_hcb/library.css').then(response => response.arrayBuffer())))
      cached.push(await timed(() => fetch(url + '/resources/sap/m/themes/sap_horizon_hcb/library.css').then(response => response.arrayBuffer())))
    }
    printLine('sap.m theme compiled from LESS (first request)', figures(compile))
    printLine('sap.m theme from the compile cache', figures(cached))
    printRatio('cached / compiled', figures(cached), figures(compile) as Figures)
  } finally {
    await browser.close()
  }
  console.log()
}

async function wireBytes(files: string[], encoding: string): Promise<number> {
  let total = 0
  for (const file of files) {
    const response = await fetch(file, { headers: { 'accept-encoding': encoding } })
    // fetch decodes the body; the bytes sent are the raw stream's, read before decoding.
    const length = Number(response.headers.get('content-length'))
    total += Number.isFinite(length) && length > 0 ? length : (await gzippedLength(file, encoding))
    await response.body?.cancel()
  }
  return total
}

/** The size of a compressed (chunked) answer as sent: read with node:http, which does not decode. */
function gzippedLength(file: string, encoding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    import('node:http').then(({ get }) => get(file, { headers: { 'accept-encoding': encoding } }, response => {
      let length = 0
      response.on('data', (chunk: Buffer) => (length += chunk.length))
      response.on('end', () => resolve(length))
    }).on('error', reject))
  })
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await work()
  return performance.now() - started
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`
