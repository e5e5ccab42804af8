import { readdirSync } from 'node:fs'
import cds from '@sap/cds'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'

/**
 * The OpenUI5 runtime the front ends load, from the @openui5 packages on npm: each package's `src`
 * folder is one root of /resources (the library's modules, its LESS theme sources, fonts, images).
 */

const PACKAGES = ['sap.ui.core', 'sap.m', 'sap.f', 'sap.ui.layout', 'sap.ui.unified', 'themelib_sap_horizon']

/** The libraries whose themes are compiled and served (the theme library is not one). */
export const UI5_LIBRARIES = PACKAGES.filter(name => name.startsWith('sap.'))

/** Resolves packages as the application does, from its root. */
export const requireFromApp = createRequire(resolve(cds.root, 'package.json'))
const packageDir = (name: string) => dirname(requireFromApp.resolve(`@openui5/${name}/package.json`))

const packageVersion = (name: string): string => requireFromApp(`@openui5/${name}/package.json`).version

/** What UI5 reads from resources/sap-ui-version.json (its own build writes it): the distribution and its libraries. */
export const UI5_VERSION_INFO = {
  name: 'OpenUI5 from npm',
  version: packageVersion('sap.ui.core'),
  libraries: PACKAGES.map(name => ({ name, version: packageVersion(name) })),
}

export const UI5_ROOTS: string[] = PACKAGES.map(name => join(packageDir(name), 'src'))
export const UI5_VERSION: string = UI5_VERSION_INFO.version

/**
 * A library's descriptor (resources/<library>/manifest.json), which UI5's own build makes from its
 * `.library` file: here its identity and the locales of its message bundles, so UI5 asks for no
 * bundle that does not exist.
 */
export function libraryManifest(library: string): object | undefined {
  if (!UI5_LIBRARIES.includes(library)) return undefined
  const folder = join(packageDir(library), 'src', ...library.split('.'))
  const locales = readdirSync(folder).map(file => /^messagebundle(?:_(\w+))?\.properties$/.exec(file)).filter(match => !!match).map(match => match[1] ?? '')
  return {
    '_version': '1.21.0',
    'sap.app': { id: library, type: 'library', applicationVersion: { version: packageVersion(library) } },
    'sap.ui5': { library: { i18n: { bundleUrl: 'messagebundle.properties', supportedLocales: locales } } },
  }
}
