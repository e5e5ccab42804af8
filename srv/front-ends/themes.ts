import cds from '@sap/cds'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { ThemeTask } from './theme-worker.ts'
import { UI5_LIBRARIES, UI5_ROOTS, UI5_VERSION } from './ui5-packages.ts'
import { appFile } from '../lib/app-files.ts'

/**
 * UI5's themes, compiled on first request. The @openui5 packages on npm carry LESS sources, not
 * CSS; each library's theme is compiled once, in a worker thread (sap.m takes seconds and must not
 * hold the server), into a cache folder keyed by the UI5 version, and served from there on.
 * Concurrent requests for one theme wait for the same compilation.
 */

const THEMES = ['sap_horizon', 'sap_horizon_dark', 'sap_horizon_hcb', 'sap_horizon_hcw'] as const
const THEME_FILES = ['library.css', 'library-RTL.css', 'library-parameters.json'] as const

const cacheDir = () => resolve(cds.root, 'node_modules/.cache/chain-access-gateway/ui5-themes', UI5_VERSION)
const building = new Map<string, Promise<string>>()

/** A theme file's request path under /resources, parsed: which library, theme and file; undefined when it is none. */
export function themeFileOf(path: string): { library: string; theme: string; file: string } | undefined {
  const match = /^\/(.+)\/themes\/([a-z_]+)\/([\w-]+\.(?:css|json))$/.exec(path)
  if (!match) return undefined
  const [, libraryPath, theme, file] = match
  const library = libraryPath.replace(/\//g, '.')
  if (!UI5_LIBRARIES.includes(library) || !(THEMES as readonly string[]).includes(theme) || !(THEME_FILES as readonly string[]).includes(file)) return undefined
  return { library, theme, file }
}

/** The folder that holds the compiled theme of a library, compiling it first when it is not there yet. */
export function compiledTheme(library: string, theme: string): Promise<string> {
  const outputDir = join(cacheDir(), library.replace(/\./g, '/'), theme)
  if (existsSync(join(outputDir, 'library.css'))) return Promise.resolve(outputDir)
  let compiling = building.get(outputDir)
  if (!compiling) {
    const task: ThemeTask = { lessInputPath: `${library.replace(/\./g, '/')}/themes/${theme}/library.source.less`, library, rootPaths: UI5_ROOTS, outputDir, root: cds.root }
    compiling = compileInWorker(task).then(() => outputDir).finally(() => building.delete(outputDir))
    building.set(outputDir, compiling)
  }
  return compiling
}

/** Compiles the Horizon theme of every library in the background, so the first page load does not wait. */
export function compileThemesAhead(): void {
  const started = Date.now()
  Promise.all(UI5_LIBRARIES.map(library => compiledTheme(library, 'sap_horizon')))
    .then(() => cds.log('front-ends').debug(`UI5 Horizon themes ready in ${Date.now() - started} ms`))
    .catch(error => cds.log('front-ends').warn('compiling the UI5 themes ahead failed:', error?.message ?? error))
}

function compileInWorker(task: ThemeTask): Promise<void> {
  return new Promise((done, fail) => {
    const worker = new Worker(appFile('themeWorker'), { workerData: task, execArgv: ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON'] })
    worker.once('message', (reply: { ok: boolean; message?: string }) => (reply.ok ? done() : fail(new Error(`compiling ${task.lessInputPath}: ${reply.message}`))))
    worker.once('error', fail)
    worker.once('exit', code => fail(new Error(`the theme compiler for ${task.lessInputPath} stopped (exit code ${code})`)))
  })
}
