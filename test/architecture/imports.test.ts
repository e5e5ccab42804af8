import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

/**
 * The import structure of srv/: no import cycle anywhere (a type-only import counts: it still ties
 * the two files to each other), and no service folder (one with a service.cds) importing from
 * another service folder: services meet through the chain ports, the CDS model and CAP's service
 * API, never through each other's files.
 */

const root = resolve(__dirname, '..', '..')
const srv = join(root, 'srv')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The file a relative specifier names, as Node and TypeScript resolve it here (with or without extension, or a folder's index). */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier)
  return [base, `${base}.ts`, join(base, 'index.ts')].find(candidate => existsSync(candidate) && statSync(candidate).isFile())
}

/** Every file under srv/ with the srv/ files it imports (static, type-only, re-exports, dynamic and require). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(srv)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const targets = importedFiles
      .map(imported => imported.fileName)
      .filter(specifier => specifier.startsWith('./') || specifier.startsWith('../'))
      .map(specifier => resolveSpecifier(file, specifier))
      .filter((target): target is string => !!target && target.startsWith(srv + sep))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The strongly connected components with more than one file, or a file importing itself: each is a cycle (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter++)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

const show = (file: string) => relative(root, file)
/** srv/<folder>/… → <folder>; a file directly in srv/ → '.' */
const folderOf = (file: string) => (relative(srv, file).includes(sep) ? relative(srv, file).split(sep)[0] : '.')

const graph = importGraph()
const allCycles = cycles(graph)
const folders = [...new Set([...graph.keys()].map(folderOf))].sort()
const serviceFolders = folders.filter(folder => existsSync(join(srv, folder, 'service.cds')))

test('the import graph is read: srv/ has files and relative imports between them', () => {
  expect(graph.size).toBeGreaterThan(20)
  expect([...graph.values()].flat().length).toBeGreaterThan(20)
  expect(serviceFolders).toEqual(expect.arrayContaining(['chaina-odata', 'chaina-sign', 'chaina-transaction']))
})

test.each(folders)('no import cycle runs through srv/%s', folder => {
  const through = allCycles.filter(cycle => cycle.some(file => folderOf(file) === folder))
  expect(through.map(cycle => cycle.map(show))).toEqual([])
})

test.each(serviceFolders)('srv/%s imports nothing from another service folder', folder => {
  const crossing = [...graph]
    .filter(([file]) => folderOf(file) === folder)
    .flatMap(([file, targets]) => targets.filter(target => serviceFolders.includes(folderOf(target)) && folderOf(target) !== folder).map(target => `${show(file)} -> ${show(target)}`))
  expect(crossing).toEqual([])
})

describe('the checks themselves', () => {
  test('a cycle of three files is found, a chain is not', () => {
    const loop = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])
    expect(cycles(loop)).toEqual([['a', 'b', 'c']])
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', []]]))).toEqual([])
  })

  test('a file importing itself is a cycle', () => {
    expect(cycles(new Map([['a', ['a']]]))).toEqual([['a']])
  })
})
