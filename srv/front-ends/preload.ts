import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, posix, relative, sep } from 'node:path'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'

/**
 * One preload bundle of the UI5 modules the portal uses, so a first visit fetches one file instead
 * of some 500 (what UI5's own build does with its library-preload files, which the npm packages do
 * not carry). The modules are found by following the portal's own files: the controls its XML
 * views name, the modules its scripts define or require, and theirs in turn. Each module's source
 * goes in as a function (`sap.ui.require.preload`), which runs only when the module is required,
 * so nothing is evaluated from a string (the content security policy allows no eval). The portal's
 * own files stay out of it: they are read fresh on each visit, so an edit shows at the next reload.
 * What the trace cannot see (a module named at run time) still loads on its own.
 */

export interface PreloadBundle {
  modules: number
  body: Buffer
  gzipped: Buffer
  etag: string
}

/** Loaded by script tags of their own, or not AMD modules: never bundled. */
const NOT_BUNDLED = [/^ui5loader/, /^sap-ui-/, /^sap\/ui\/thirdparty\//, /^jquery\.sap\./, /\/designtime\//, /\/themes\//]

/** What UI5 loads on its own when the portal boots, besides what the portal's files name. */
const BOOT_MODULES = ['sap/ui/core/Core', 'sap/ui/core/ComponentSupport', 'sap/ui/core/ComponentContainer', 'sap/ui/core/UIComponent',
  'sap/ui/core/mvc/XMLView', 'sap/ui/core/Fragment', 'sap/m/routing/Router', 'sap/ui/model/odata/v4/ODataModel',
  'sap/ui/model/resource/ResourceModel', 'sap/ui/model/json/JSONModel']

export async function buildPreloadBundle(portalDir: string, roots: string[], namespace: string): Promise<PreloadBundle> {
  const locate = (name: string) => roots.map(root => join(root, name)).find(file => existsSync(file))
  const found = new Map<string, string>()
  const pending: string[] = [...BOOT_MODULES]

  for (const file of filesUnder(portalDir)) {
    const text = await readFile(file, 'utf8')
    if (file.endsWith('.js')) pending.push(...dependenciesOf(text, `${namespace}/${relative(portalDir, file).split(sep).join('/')}`))
    else if (file.endsWith('.xml')) pending.push(...controlsOf(text))
    else if (file.endsWith('manifest.json')) pending.push(...librariesOf(text))
  }
  while (pending.length) {
    const name = pending.pop()!
    if (found.has(name) || name.startsWith(namespace + '/') || NOT_BUNDLED.some(pattern => pattern.test(name))) continue
    const file = locate(`${name}.js`)
    if (!file) continue
    // Read one at a time, asynchronously: the server keeps answering while the bundle is made.
    const source = await readFile(file, 'utf8')
    found.set(name, source)
    pending.push(...dependenciesOf(source, `${name}.js`))
  }

  const entries = [...found].sort(([a], [b]) => a.localeCompare(b))
    .map(([name, source]) => `${JSON.stringify(`${name}.js`)}:function(){${source}\n}`)
  const body = Buffer.from(`//@ui5-bundle ${namespace}/preload.js\nsap.ui.require.preload({\n${entries.join(',\n')}\n},"${namespace}/preload");\n`)
  const gzipped = await promisify(gzip)(body)
  return { modules: found.size, body, gzipped, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]))
}

/** The modules a script names in sap.ui.define, sap.ui.require and sap.ui.requireSync, resolved against its own name. */
export function dependenciesOf(source: string, fileName: string): string[] {
  const names: string[] = []
  const lists = /sap\.ui\.(?:define|require|predefine)\(\s*(?:(["'])[^"']*\1\s*,\s*)?\[([^\]]*)\]/g
  for (const match of source.matchAll(lists)) names.push(...stringsIn(match[2]))
  for (const match of source.matchAll(/sap\.ui\.require(?:Sync)?\(\s*(["'])([\w./-]+)\1\s*\)/g)) names.push(match[2])
  const dir = posix.dirname(fileName)
  return names.map(name => (name.startsWith('./') || name.startsWith('../') ? posix.join(dir, name) : name)).map(name => name.replace(/\.js$/, ''))
}

const stringsIn = (text: string) => [...text.matchAll(/(["'])([\w./-]+)\1/g)].map(match => match[2])

/** The controls an XML view or fragment names: `<Button>` in the namespace `sap.m` is `sap/m/Button`. */
export function controlsOf(xml: string): string[] {
  const namespaces = new Map<string, string>()
  for (const match of xml.matchAll(/xmlns(?::(\w+))?="([\w.]+)"/g)) namespaces.set(match[1] ?? '', match[2])
  const controls: string[] = []
  for (const match of xml.matchAll(/<(?:(\w+):)?([A-Z]\w*)[\s/>]/g)) {
    const namespace = namespaces.get(match[1] ?? '')
    if (namespace) controls.push(`${namespace.replace(/\./g, '/')}/${match[2]}`)
  }
  return controls
}

/** The libraries a component's manifest depends on, as their library modules. */
function librariesOf(manifest: string): string[] {
  const libraries = Object.keys(JSON.parse(manifest)['sap.ui5']?.dependencies?.libs ?? {})
  return libraries.map(library => `${library.replace(/\./g, '/')}/library`)
}
