import cds from '@sap/cds'
import compression from 'compression'
import express, { type Application, type NextFunction, type Request, type Response } from 'express'
import { dirname, join } from 'node:path'
import { sendError } from '../lib/http-safety.ts'
import { buildPreloadBundle, type PreloadBundle } from './preload.ts'
import { compiledTheme, compileThemesAhead, themeFileOf } from './themes.ts'
import { libraryManifest, requireFromApp, UI5_ROOTS, UI5_VERSION_INFO } from './ui5-packages.ts'
import { appFile } from '../lib/app-files.ts'

/**
 * The web front ends, served by the application itself, free of charge and without a key: the
 * portal (keys, explorer, analytics) at `/`, its files under `/portal`; the operator console at
 * `/console`, its files under `/console/` (the page is free, every data call it makes needs the
 * operator's login, which the operator service asks for); and the OpenUI5 runtime
 * under `/resources` from the @openui5 packages (themes compiled on first use, see themes.ts),
 * with Chart.js beside it. Every page goes out with a content security policy that allows
 * nothing but this origin (UI5 writes inline style attributes, so styles may be inline).
 */

/** Each web app: where its files are, where they are served and its UI5 namespace (for its preload bundle). */
const WEB_APPS = {
  portal: { dir: () => appFile('portal'), base: '/portal', namespace: 'cag/portal' },
  console: { dir: () => appFile('console'), base: '/console', namespace: 'cag/console' },
} as const
type WebApp = keyof typeof WEB_APPS

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

// The package's entry is dist/chart.cjs; its browser build chart.umd.min.js sits beside it.
const CHART_JS_DIR = dirname(requireFromApp.resolve('chart.js'))

/** Versioned runtime files may be cached for a day; the web apps' own files are revalidated each time. */
const RUNTIME_CACHE = { maxAge: '1d', fallthrough: true, index: false, redirect: false } as const
const APP_CACHE = { maxAge: 0, fallthrough: true, index: false, redirect: false } as const

/** The runtime is some 12 MB of sources; compressed, a first visit moves a quarter of that. */
const compressed = compression({ threshold: 1024 })

export function serveFrontEnds(app: Application): void {
  app.use(['/portal', '/console', '/resources'], compressed)
  app.get(['/', '/index.html'], compressed, servePage('portal'))
  app.get('/console', servePage('console'))
  for (const name of Object.keys(WEB_APPS) as WebApp[]) {
    const { base, dir } = WEB_APPS[name]
    app.get(`${base}/preload.js`, securityHeaders, servePreload(name))
    app.use(base, readOnly, securityHeaders, express.static(dir(), APP_CACHE), notFound(base))
  }
  app.use('/resources', readOnly, securityHeaders, serveTheme)
  app.get('/resources/sap-ui-version.json', (_req: Request, res: Response) => res.json(UI5_VERSION_INFO))
  app.get(/^\/resources\/(sap\/[\w/]+)\/manifest\.json$/, (req: Request, res: Response, next: NextFunction) => {
    const manifest = libraryManifest(req.params[0].replace(/\//g, '.'))
    return manifest ? res.json(manifest) : next()
  })
  app.use('/resources/chart.js', express.static(CHART_JS_DIR, RUNTIME_CACHE))
  for (const root of UI5_ROOTS) app.use('/resources', express.static(root, RUNTIME_CACHE))
  app.use('/resources', notFound('/resources'))
  if (process.env.NODE_ENV !== 'test') cds.once('listening', () => {
    compileThemesAhead()
    preloadBundle('portal').catch(() => undefined)
  })
}

/** A web app's page (its index.html), revalidated on each visit, with the security headers. */
const servePage = (name: WebApp) => (_req: Request, res: Response) => {
  withSecurityHeaders(res)
  res.sendFile(join(WEB_APPS[name].dir(), 'index.html'), { headers: { 'cache-control': 'no-cache' } })
}

const preloads = new Map<WebApp, Promise<PreloadBundle>>()

/** A web app's preload bundle, made once per process (see preload.ts). */
function preloadBundle(name: WebApp): Promise<PreloadBundle> {
  const { dir, namespace } = WEB_APPS[name]
  let preload = preloads.get(name)
  if (!preload) {
    preload = buildPreloadBundle(dir(), UI5_ROOTS, namespace).then(bundle => {
      cds.log('front-ends').debug(`${name} preload bundle: ${bundle.modules} modules, ${bundle.body.length} bytes (${bundle.gzipped.length} compressed)`)
      return bundle
    }).catch(error => {
      preloads.delete(name)
      throw error
    })
    preloads.set(name, preload)
  }
  return preload
}

const servePreload = (name: WebApp) => (req: Request, res: Response) => {
  preloadBundle(name).then(bundle => {
    res.setHeader('content-type', 'application/javascript; charset=utf-8')
    res.setHeader('cache-control', 'no-cache')
    res.setHeader('etag', bundle.etag)
    res.setHeader('vary', 'Accept-Encoding')
    if (req.headers['if-none-match'] === bundle.etag) return void res.status(304).end()
    const gzipped = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))
    if (gzipped) res.setHeader('content-encoding', 'gzip')
    res.end(req.method === 'HEAD' ? undefined : gzipped ? bundle.gzipped : bundle.body)
  }).catch(error => {
    cds.log('front-ends').error(`the ${name} preload bundle could not be made:`, error?.message ?? error)
    // Without the bundle UI5 loads each module on its own: slower, not broken.
    res.setHeader('content-type', 'application/javascript; charset=utf-8')
    res.end('// no preload bundle: modules load one by one\n')
  })
}

const isRead = (req: Request) => req.method === 'GET' || req.method === 'HEAD'

function readOnly(req: Request, res: Response, next: NextFunction) {
  if (isRead(req)) return next()
  sendError(res, 405, 'METHOD_NOT_ALLOWED', `${req.baseUrl} serves files: GET and HEAD only`, { allow: 'GET, HEAD' })
}

function withSecurityHeaders(res: Response) {
  res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY)
  res.setHeader('x-content-type-options', 'nosniff')
  res.setHeader('referrer-policy', 'no-referrer')
}

function securityHeaders(_req: Request, res: Response, next: NextFunction) {
  withSecurityHeaders(res)
  next()
}

function serveTheme(req: Request, res: Response, next: NextFunction) {
  const wanted = themeFileOf(req.path)
  if (!wanted) return next()
  compiledTheme(wanted.library, wanted.theme)
    .then(dir => res.sendFile(join(dir, wanted.file), { maxAge: RUNTIME_CACHE.maxAge, dotfiles: 'allow' }))
    .catch(error => {
      cds.log('front-ends').error(error?.message ?? error)
      sendError(res, 503, 'THEME_UNAVAILABLE', `The ${wanted.theme} theme of ${wanted.library} could not be compiled; the server log says why`)
    })
}

const notFound = (base: string) => (req: Request, res: Response) =>
  sendError(res, 404, 'FILE_NOT_FOUND', `No file at ${base}${req.path.slice(0, 200)}`)
