import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

/**
 * The devnets stay out of the product: no file of them lies under srv/, and no file under srv/
 * imports devnet/ statically (a type-only import counts). The one way in is the development and
 * test bootstrap, srv/server.ts, with a dynamic import made only when a devnet is the upstream.
 */

const root = resolve(__dirname, '..', '..')
const srv = join(root, 'srv')
const devnet = join(root, 'devnet')
const BOOTSTRAP = join(srv, 'server.ts')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? [path, ...files(path)] : [path]
  })
}

interface Import {
  specifier: string
  dynamic: boolean
}

/** The module specifiers of a source: import and export declarations, import-equals, dynamic import() and require(). */
function importsOf(source: string): Import[] {
  const found: Import[] = []
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, dynamic: false })
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push({ specifier: node.moduleReference.expression.text, dynamic: false })
    } else if (ts.isCallExpression(node) && node.arguments.length && ts.isStringLiteralLike(node.arguments[0])) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) found.push({ specifier: node.arguments[0].text, dynamic: true })
      else if (ts.isIdentifier(node.expression) && node.expression.text === 'require') found.push({ specifier: node.arguments[0].text, dynamic: false })
    }
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('source.ts', source, ts.ScriptTarget.Latest, true))
  return found
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep)
const show = (path: string) => relative(root, path)

/** The imports of the file that reach into devnet/, with whether each is dynamic. */
function devnetImports(file: string, source = readFileSync(file, 'utf8')): Import[] {
  return importsOf(source).filter(({ specifier }) => specifier.startsWith('.') && inside(resolve(dirname(file), specifier), devnet))
}

const srvFiles = files(srv)
const sources = srvFiles.filter(path => /\.[cm]?[jt]s$/.test(path) && !path.endsWith('.d.ts'))

test('no devnet file lies under srv/', () => {
  expect(srvFiles.filter(path => /devnet/i.test(relative(srv, path))).map(show)).toEqual([])
})

test('no file under srv/ imports devnet/ statically', () => {
  const crossing = sources.flatMap(file => devnetImports(file).filter(({ dynamic }) => !dynamic).map(({ specifier }) => `${show(file)} -> ${specifier}`))
  expect(crossing).toEqual([])
})

test('only the bootstrap (srv/server.ts) loads devnet code, with a dynamic import', () => {
  const loading = sources.filter(file => devnetImports(file).length).map(show)
  expect(loading).toEqual([show(BOOTSTRAP)])
  expect(devnetImports(BOOTSTRAP).every(({ dynamic }) => dynamic)).toBe(true)
})

describe('the checks themselves', () => {
  const file = join(srv, 'chains', 'chain-a', 'example.ts')

  test('static, type-only, re-export and require imports of devnet/ are found, as is a dynamic one', () => {
    const source = [
      "import { ChainADevnet } from '../../../devnet/chain-a/index.ts'",
      "import type { Block } from '../../../devnet/chain-a/types.ts'",
      "export { shown } from '../../../devnet/shared/state.ts'",
      "const state = require('../../../devnet/chain-b/state.ts')",
      "const later = () => import('../../../devnet/chain-a/embedded.ts')",
      "import { csl } from '../csl.ts'",
    ].join('\n')
    expect(devnetImports(file, source)).toEqual([
      { specifier: '../../../devnet/chain-a/index.ts', dynamic: false },
      { specifier: '../../../devnet/chain-a/types.ts', dynamic: false },
      { specifier: '../../../devnet/shared/state.ts', dynamic: false },
      { specifier: '../../../devnet/chain-b/state.ts', dynamic: false },
      { specifier: '../../../devnet/chain-a/embedded.ts', dynamic: true },
    ])
  })

  test('a folder named like devnet inside srv/ is not devnet/', () => {
    expect(devnetImports(file, "import { x } from './devnet/index.ts'")).toEqual([])
  })
})
