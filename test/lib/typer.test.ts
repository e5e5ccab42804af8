import { execFile } from 'node:child_process'
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'

/**
 * `npm run typer` (db/typer.js) writes @cds-models when the model changed and leaves it alone
 * otherwise, so `npm start` and two test runs at once never rewrite the types under each other.
 * Run in a copy of the project's model, with its node_modules linked.
 */

jest.setTimeout(120_000)

const root = join(__dirname, '..', '..')
const NOT_COPIED = new Set(['node_modules', '.git', 'gen', '@cds-models', 'data', 'coverage', 'test', 'zk', 'app', 'bench', 'faults', '.ci'])
let project: string

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'cag-typer-'))
  cpSync(root, project, { recursive: true, filter: source => !NOT_COPIED.has(relative(root, source).split('/')[0]) })
  symlinkSync(join(root, 'node_modules'), join(project, 'node_modules'))
})
afterAll(() => rmSync(project, { recursive: true, force: true }))

const typer = (...args: string[]) => promisify(execFile)(process.execPath, ['db/typer.js', ...args], { cwd: project })
const written = () => statSync(join(project, '@cds-models', 'gateway', 'index.ts')).mtimeMs
const stamp = () => readFileSync(join(project, '@cds-models', '.model-hash'), 'utf8')

test('the first run writes the types and the model\'s hash; a second finds them current and writes nothing', async () => {
  await typer()
  const first = { written: written(), stamp: stamp() }
  await typer()
  expect({ written: written(), stamp: stamp() }).toEqual(first)
})

test('a changed .cds file writes them again, and --force writes them regardless', async () => {
  const before = { written: written(), stamp: stamp() }
  appendFileSync(join(project, 'db', 'gateway.cds'), '\n// changed by the test\n')
  await typer()
  expect(stamp()).not.toBe(before.stamp)
  expect(written()).toBeGreaterThan(before.written)
  const after = written()
  await typer('--force')
  expect(written()).toBeGreaterThan(after)
})
