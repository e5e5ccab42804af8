import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * The README stays true as the tree changes: every path its architecture map names exists, and
 * every document it links to is there.
 */

const root = resolve(__dirname, '..', '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

function architectureMapPaths(): string[] {
  const marker = '<!-- architecture-map:'
  const at = readme.indexOf(marker)
  if (at < 0) throw new Error(`README.md has no '${marker}'`)
  const block = /```\n([\s\S]*?)```/.exec(readme.slice(at))
  if (!block) throw new Error('README.md has no code block after its architecture-map marker')
  return block[1].split('\n').filter(line => line.trim()).map(line => line.split(/\s+/)[0])
}

function linkedDocuments(): string[] {
  return [...readme.matchAll(/\]\(((?:docs|app|srv|test|devnet)\/[^)#\s]+)/g)].map(match => match[1])
}

test('every path the architecture map names exists', () => {
  const paths = architectureMapPaths()
  expect(paths.length).toBeGreaterThan(10)
  expect(paths.filter(path => !existsSync(join(root, path)))).toEqual([])
})

test('every document the README links to exists', () => {
  const documents = linkedDocuments()
  expect(documents).toContain('docs/routes.md')
  expect(documents).toContain('docs/configuration.md')
  expect(documents.filter(path => !existsSync(join(root, path)))).toEqual([])
})
