import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

/**
 * The metering core knows no chain and no product (DESIGN 2): nothing under srv/gateway/ imports
 * the chains (srv/chains/), the key lanes (srv/key-lanes/, which register their routes with the
 * gateway) or any devnet, and no gateway file names a product service in its code: products
 * declare themselves with `@gateway…` annotations, which the gateway reads from the model.
 */

const root = resolve(__dirname, '..', '..')
const gateway = join(root, 'srv', 'gateway')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** Where a relative import leads, as a path from the project root with `/` separators (without resolving the file). */
const targetOf = (from: string, specifier: string) => relative(root, resolve(dirname(from), specifier)).split(sep).join('/')

/** What the file imports that the gateway must not (static, type-only, re-exports, dynamic and require). */
function forbiddenImports(file: string, text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles
    .map(imported => imported.fileName)
    .filter(specifier => {
      if (/devnet/i.test(specifier)) return true
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) return false
      const target = targetOf(file, specifier)
      return target.startsWith('srv/chains/') || target.startsWith('srv/key-lanes/') || target.split('/').some(part => /devnet/i.test(part))
    })
}

/** The services the model declares (`service Name`) in the cds files under srv/. */
function serviceNames(): string[] {
  const cdsFiles = (dir: string): string[] => readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return cdsFiles(path)
    return name.endsWith('.cds') ? [path] : []
  })
  const names = cdsFiles(join(root, 'srv')).flatMap(file => [...readFileSync(file, 'utf8').matchAll(/^\s*(?:@[^\n]*\s+)?service\s+([A-Za-z_]\w*)/gm)].map(match => match[1]))
  return [...new Set(names)].sort()
}

/** The service names the file's code names (identifiers and string or template text; not comments). */
function namedServices(text: string, services: string[]): string[] {
  const named = new Set<string>()
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      if (services.includes(node.text)) named.add(node.text)
    } else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      for (const service of services) if (new RegExp(`\\b${service}\\b`).test(node.text)) named.add(service)
    }
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('checked.ts', text, ts.ScriptTarget.Latest, true))
  return [...named].sort()
}

const files = sourceFiles(gateway)
const services = serviceNames()
const show = (file: string) => relative(root, file)

test('the gateway and the model are read: files under srv/gateway/, product services in the model', () => {
  expect(files.length).toBeGreaterThan(10)
  expect(services).toEqual(expect.arrayContaining(['ChainAReadService', 'ChainBService', 'AnalyticsService']))
})

test.each(files.map(show))('%s imports no chain, no key lane and no devnet', file => {
  expect(forbiddenImports(join(root, file), readFileSync(join(root, file), 'utf8'))).toEqual([])
})

test.each(files.map(show))('%s names no product service in its code', file => {
  expect(namedServices(readFileSync(join(root, file), 'utf8'), services)).toEqual([])
})

describe('the checks themselves', () => {
  const file = join(gateway, 'example.ts')

  test('imports of a chain, a key lane or a devnet are found, in every form; the gateway\'s own and lib\'s are not', () => {
    const text = [
      "import { chainA } from '../chains/chain-a/index.ts'",
      "import type { Lane } from '../key-lanes/purchase-quotes.ts'",
      "export * from '../chains/chain-b/port.ts'",
      "const devnet = await import('../../devnet/chain-a/index.ts')",
      "const wallet = require('../chains/chain-a/embedded-devnet.ts')",
      "import { ledger } from './ledger.ts'",
      "import { ApiError } from '../lib/errors.ts'",
      "import cds from '@sap/cds'",
    ].join('\n')
    expect(forbiddenImports(file, text)).toEqual([
      '../chains/chain-a/index.ts', '../key-lanes/purchase-quotes.ts', '../chains/chain-b/port.ts', '../../devnet/chain-a/index.ts', '../chains/chain-a/embedded-devnet.ts',
    ])
  })

  test('a service named in code, a string or a template is found; in a comment it is not', () => {
    const text = [
      '// ChainBService says so',
      '/** ChainAReadService too */',
      'const chainB = cds.services.ChainBService',
      "const rules = ['ChainAReadService:*']",
      'const other = `${prefix}AnalyticsService`',
      "const unrelated = 'ChainBServiceX'",
    ].join('\n')
    expect(namedServices(text, ['AnalyticsService', 'ChainAReadService', 'ChainBService', 'ChainBIndexerService'])).toEqual(['AnalyticsService', 'ChainAReadService', 'ChainBService'])
  })
})
