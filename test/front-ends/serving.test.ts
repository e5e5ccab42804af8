import cds from '@sap/cds'
import { existsSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { join } from 'node:path'
import { compiledTheme } from '../../srv/front-ends/themes.ts'
import { controlsOf, dependenciesOf } from '../../srv/front-ends/preload.ts'

process.env.GATEWAY_ENABLED = 'true'
const { GET, POST, axios, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

/** The body's bytes as sent, not decoded. */
function bytesOnTheWire(path: string, encoding: string, headers: Record<string, string> = {}): Promise<{ status?: number; length: number; headers: Record<string, unknown>; etag?: string }> {
  return new Promise((resolve, reject) => {
    get(new URL(path, axios.defaults.baseURL), { headers: { 'accept-encoding': encoding, ...headers } }, response => {
      let length = 0
      response.on('data', (chunk: Buffer) => (length += chunk.length))
      response.on('end', () => resolve({ status: response.statusCode, length, headers: response.headers, etag: response.headers.etag }))
    }).on('error', reject)
  })
}

/** A raw GET: axios would resolve `..` segments itself. */
const raw = (path: string) => axios.request({ url: path, method: 'GET', transformResponse: (body: unknown) => body })

describe('the portal', () => {
  test('is served at / and /index.html, free and without a key, with a content security policy that allows no inline script', async () => {
    for (const path of ['/', '/index.html']) {
      const page = await GET(path)
      expect(page.status).toBe(200)
      expect(page.headers['content-type']).toMatch(/text\/html/)
      expect(page.data).toContain('data-sap-ui-component')
      expect(page.headers['x-access-units-charged']).toBe('0')
      expect(page.headers['content-security-policy']).toMatch(/script-src 'self';/)
      expect(page.headers['content-security-policy']).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
      // The page itself holds no inline script: every <script> loads a file.
      expect(page.data.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull()
    }
  })

  test('serves its own files under /portal, and 404s with a code for what is not there', async () => {
    const manifest = await GET('/portal/manifest.json')
    expect(manifest.status).toBe(200)
    expect(manifest.data['sap.app'].id).toBe('cag.portal')
    const missing = await GET('/portal/nothing.js')
    expect([missing.status, missing.data.error.code]).toEqual([404, 'FILE_NOT_FOUND'])
  })

  test('files are read-only: other methods answer 405', async () => {
    const posted = await POST('/portal/manifest.json', {})
    expect(posted.status).toBe(405)
    expect((await POST('/resources/sap-ui-core.js', {})).status).toBe(405)
  })

  test('no path leaves its folder', async () => {
    for (const path of ['/portal/../../package.json', '/portal/%2e%2e/%2e%2e/package.json', '/resources/../../../package.json', '/resources/%2e%2e%2f%2e%2e%2fpackage.json']) {
      const answer = await raw(path)
      expect(answer.status).toBeGreaterThanOrEqual(400)
      expect(String(answer.data)).not.toContain('"name": "chain-access-gateway"')
    }
  })
})

describe('the OpenUI5 runtime under /resources', () => {
  test('comes from the @openui5 packages, with the version file and library descriptors UI5 asks for', async () => {
    const loader = await GET('/resources/ui5loader.js')
    expect(loader.status).toBe(200)
    expect(loader.headers['cache-control']).toMatch(/max-age=86400/)
    const version = await GET('/resources/sap-ui-version.json')
    expect(version.data.libraries.map((library: any) => library.name)).toEqual(expect.arrayContaining(['sap.ui.core', 'sap.m', 'sap.f']))
    const descriptor = await GET('/resources/sap/m/manifest.json')
    expect(descriptor.data['sap.app']).toMatchObject({ id: 'sap.m', type: 'library' })
    expect(descriptor.data['sap.ui5'].library.i18n.supportedLocales).toEqual(expect.arrayContaining(['', 'en', 'de']))
    expect((await GET('/resources/sap/nothing/manifest.json')).status).toBe(404)
  })

  test('is sent compressed to browsers that accept it, and revalidated by its ETag', async () => {
    const plain = await bytesOnTheWire('/resources/sap/m/library.js', 'identity')
    const zipped = await bytesOnTheWire('/resources/sap/m/library.js', 'gzip')
    expect(zipped.headers['content-encoding']).toBe('gzip')
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(zipped.length * 3).toBeLessThan(plain.length)
    const again = await bytesOnTheWire('/resources/sap/m/library.js', 'gzip', { 'if-none-match': plain.etag! })
    expect([again.status, again.length]).toEqual([304, 0])
  })

  test('Chart.js is served beside it', async () => {
    const chart = await GET('/resources/chart.js/chart.umd.min.js')
    expect(chart.status).toBe(200)
    expect(chart.headers['content-type']).toMatch(/javascript/)
  })

  test('a theme is compiled from its LESS sources, then served from the cache', async () => {
    const cached = join(cds.root, 'node_modules/.cache/chain-access-gateway/ui5-themes')
    rmSync(join(cached, (await GET('/resources/sap-ui-version.json')).data.version, 'sap/f/sap_horizon_dark'), { recursive: true, force: true })
    const [css, rtl, parameters] = await Promise.all([
      GET('/resources/sap/f/themes/sap_horizon_dark/library.css'),
      GET('/resources/sap/f/themes/sap_horizon_dark/library-RTL.css'),
      GET('/resources/sap/f/themes/sap_horizon_dark/library-parameters.json'),
    ])
    expect([css.status, rtl.status, parameters.status]).toEqual([200, 200, 200])
    expect(css.headers['content-type']).toMatch(/text\/css/)
    // UI5 reads the theme's parameters from the CSS itself, as its own build inlines them.
    expect(css.data).toContain('#sap-ui-theme-sap\\.f{background-image:url(')
    expect(rtl.data).not.toBe(css.data)
    expect(Object.keys(parameters.data).length).toBeGreaterThan(10)
    const again = await compiledTheme('sap.f', 'sap_horizon_dark')
    expect(existsSync(join(again, 'library.css'))).toBe(true)
  }, 60_000)

  test('two requests for a theme being compiled wait for the same compilation', async () => {
    const version = (await GET('/resources/sap-ui-version.json')).data.version
    rmSync(join(cds.root, 'node_modules/.cache/chain-access-gateway/ui5-themes', version, 'sap/f/sap_horizon_hcw'), { recursive: true, force: true })
    const first = compiledTheme('sap.f', 'sap_horizon_hcw')
    const second = compiledTheme('sap.f', 'sap_horizon_hcw')
    expect(second).toBe(first)
    expect(existsSync(join(await first, 'library.css'))).toBe(true)
  }, 60_000)

  test('unknown libraries, themes and theme files answer 404 (nothing is compiled for them)', async () => {
    for (const path of ['/resources/sap/x/themes/sap_horizon/library.css', '/resources/sap/m/themes/sap_fiori_3/library.css', '/resources/sap/m/themes/sap_horizon/other.css']) {
      const answer = await GET(path)
      expect([path, answer.status]).toEqual([path, 404])
    }
  })
})

describe('the preload bundle (/portal/preload.js)', () => {
  test('holds the UI5 modules the portal uses, each as a function (nothing evaluated from a string), and not the portal\'s own files', async () => {
    const bundle = await bytesOnTheWire('/portal/preload.js', 'identity')
    expect(bundle.status).toBe(200)
    const text = (await GET('/portal/preload.js')).data as string
    expect(text.startsWith('//@ui5-bundle cag/portal/preload.js\nsap.ui.require.preload({')).toBe(true)
    for (const module of ['sap/m/Button.js', 'sap/m/Table.js', 'sap/f/library.js', 'sap/ui/model/odata/v4/ODataModel.js', 'sap/ui/core/ComponentSupport.js']) {
      expect(text).toContain(`${JSON.stringify(module)}:function(){`)
    }
    const modules = [...text.matchAll(/^"([^"]+)":function\(\)\{/gm)].map(match => match[1])
    expect(modules.length).toBeGreaterThan(300)
    expect(modules.filter(module => module.startsWith('cag/portal/') || module.startsWith('sap/ui/thirdparty/'))).toEqual([])
  })

  test('goes out compressed, and a browser holding it revalidates by its ETag', async () => {
    const plain = await bytesOnTheWire('/portal/preload.js', 'identity')
    const zipped = await bytesOnTheWire('/portal/preload.js', 'gzip')
    expect(zipped.headers['content-encoding']).toBe('gzip')
    expect(zipped.length * 3).toBeLessThan(plain.length)
    expect(plain.headers['cache-control']).toBe('no-cache')
    const again = await bytesOnTheWire('/portal/preload.js', 'gzip', { 'if-none-match': plain.etag! })
    expect([again.status, again.length]).toEqual([304, 0])
  })

  test('the trace: dependencies of a module (relative names resolved) and the controls an XML view names', () => {
    const source = 'sap.ui.define(["./Base", "sap/m/library", \'sap/ui/core/Control\'], function () { sap.ui.require(["sap/m/MessageBox"]); sap.ui.requireSync("sap/ui/core/Lib") })'
    expect(dependenciesOf(source, 'sap/m/Thing.js')).toEqual(['sap/m/Base', 'sap/m/library', 'sap/ui/core/Control', 'sap/m/MessageBox', 'sap/ui/core/Lib'])
    const view = '<mvc:View xmlns="sap.m" xmlns:mvc="sap.ui.core.mvc" xmlns:l="sap.ui.layout"><Page><content><l:Grid><Button/></l:Grid></content></Page></mvc:View>'
    expect(controlsOf(view).sort()).toEqual(['sap/m/Button', 'sap/m/Page', 'sap/ui/core/mvc/View', 'sap/ui/layout/Grid'])
  })
})
