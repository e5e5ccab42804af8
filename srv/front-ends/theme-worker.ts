import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { createRequire } from 'node:module'

/**
 * One theme of one UI5 library compiled from the LESS sources the @openui5 packages ship (see
 * themes.ts), off the server's event loop: library.css with its parameters inlined (as UI5's own
 * build does), library-RTL.css and library-parameters.json, each written whole or not at all.
 */

export interface ThemeTask {
  /** e.g. `sap/m/themes/sap_horizon/library.source.less`, found in one of rootPaths. */
  lessInputPath: string
  library: string
  rootPaths: string[]
  /** Where library.css, library-RTL.css and library-parameters.json go. */
  outputDir: string
  /** The application's root, where less-openui5 is installed. */
  root: string
}

interface LessResult { css: string; cssRtl: string; variables: Record<string, string> }
interface LessBuilder { build(options: object): Promise<LessResult> }

const task = workerData as ThemeTask
const { Builder } = createRequire(resolve(task.root, 'package.json'))('less-openui5') as { Builder: new () => LessBuilder }

const written = (name: string, content: string) => {
  const file = `${task.outputDir}/${name}`
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(`${file}.part`, content)
  renameSync(`${file}.part`, file)
}

new Builder().build({ lessInputPath: task.lessInputPath, rootPaths: task.rootPaths, library: { name: task.library }, compiler: { compress: true } })
  .then(result => {
    written('library-parameters.json', JSON.stringify(result.variables))
    written('library-RTL.css', result.cssRtl)
    written('library.css', result.css)
    parentPort!.postMessage({ ok: true })
  })
  .catch(error => parentPort!.postMessage({ ok: false, message: String(error?.message ?? error).slice(0, 500) }))
