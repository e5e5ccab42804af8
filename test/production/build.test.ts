import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { APP_FILES, BUILT_FILES } from '../../srv/lib/app-files.ts'
import { mcpTarballName } from '../../mcp/names.ts'
import { buildCommands, cloudFoundryBuild } from '../support/cf-build.ts'

/**
 * The Cloud Foundry build as the MTA build tool runs it: each command of mta.yaml's build split
 * into words and run without a shell, in the project root (here a copy of it, so that the build
 * leaves this checkout's gen/ and @cds-models alone; test/support/cf-build.ts, which makes it once
 * for this file and test/postgres/deployment.test.ts). Then the artefact, gen/srv, is checked
 * for what production runs and nothing else. Its dependencies are not installed here.
 */

jest.setTimeout(600_000)

/** Shell syntax the build tool would pass on as words: operators, redirections, variables, globs, quotes, escapes. */
const SHELL_SYNTAX = /[&|;<>$`*?[\]{}()~'"\\]/

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter(entry => entry.isFile())
    .map(entry => join(entry.parentPath, entry.name))
}

const root = resolve(__dirname, '..', '..')
let gen: string
let out: string
let pkg: any
let built: { status: number | null, output: string }[] = []

beforeAll(async () => {
  const build = await cloudFoundryBuild()
  gen = build.gen
  out = join(gen, 'srv')
  built = build.runs.map(({ status, output }) => ({ status, output }))
  if (existsSync(join(out, 'package.json'))) pkg = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'))
})

describe('mta.yaml build commands', () => {
  test('each is one program with plain arguments: the build tool runs it without a shell', () => {
    const commands = buildCommands()
    expect(commands.length).toBeGreaterThan(0)
    expect(commands.filter(({ command }) => SHELL_SYNTAX.test(command))).toEqual([])
  })

  test('run as the build tool runs them, they succeed', () => {
    expect(built.length).toBeGreaterThan(0)
    for (const { status, output } of built) if (status !== 0) throw new Error(`a build command failed:\n${output}`)
  })
})

describe('gen/srv, the artefact', () => {
  const artefactFiles = () => filesUnder(out).map(file => relative(out, file).split(sep).join('/'))
  /** The server's own modules: everything but the browser's (the portal). */
  const serverModules = () => artefactFiles().filter(file => /\.c?js$/.test(file) && !file.startsWith('app/'))

  test('ships JavaScript: no TypeScript file, no development folder, no test set-up', () => {
    const files = artefactFiles()
    expect(files.filter(file => file.endsWith('.ts'))).toEqual([])
    expect(files.filter(file => /(^|\/)(devnet|test|bench)\//.test(file))).toEqual([])
    expect(files).not.toContain('jest.config.js')
    expect(files).not.toContain('tsconfig.json')
  })

  test('its package.json: production dependencies, cds-serve to start, engines, the cds configuration', () => {
    const source = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(pkg.devDependencies).toBeUndefined()
    expect(pkg.scripts).toEqual({ start: 'cds-serve' })
    expect(pkg.engines.node).toMatch(/^>=22\.12/)
    expect(pkg.dependencies['@cap-js/sqlite']).toBeUndefined()
    expect(pkg.dependencies['@cap-js/postgres']).toBeDefined()
    for (const [name, version] of Object.entries(pkg.dependencies)) expect([name, source.dependencies[name]]).toEqual([name, version])
    expect(pkg.cds.requires['[production]'].db.kind).toBe('postgres')
  })

  test('its lock matches its package.json (npm ci installs from it)', () => {
    const lock = JSON.parse(readFileSync(join(out, 'package-lock.json'), 'utf8'))
    expect(lock.packages[''].dependencies).toEqual(pkg.dependencies)
    expect(Object.keys(lock.packages).filter(path => /(^|\/)node_modules\/(jest|typescript|@cap-js\/sqlite)$/.test(path))).toEqual([])
  })

  test('gen/pg: the engines, its lock, the deployer that prints no password, and the seed rows it adds where missing', () => {
    const deployer = JSON.parse(readFileSync(join(gen, 'pg', 'package.json'), 'utf8'))
    expect(deployer.engines).toEqual(pkg.engines)
    expect(deployer.scripts.start).toBe('node db/deploy.js')
    for (const path of ['db/deploy.js', 'db/init.js', 'db/csn.json']) expect(existsSync(join(gen, 'pg', path))).toBe(true)
    const lock = JSON.parse(readFileSync(join(gen, 'pg', 'package-lock.json'), 'utf8'))
    expect(lock.packages[''].dependencies).toEqual(deployer.dependencies)
    expect(readdirSync(join(gen, 'pg', 'db', 'seed')).filter(file => file.endsWith('.csv')).length).toBeGreaterThan(0)
  })

  test.each(Object.entries(BUILT_FILES))('%s: %s is built into it, without its staging folder', (_name, path) => {
    const built = readdirSync(join(out, path))
    expect(built).toEqual([mcpTarballName(pkg.version)])
  })

  test('every implementation the cds configuration names is there', () => {
    const impls: string[] = []
    const collect = (node: unknown): void => {
      if (node && typeof node === 'object') for (const [key, value] of Object.entries(node)) {
        if (key === 'impl' && typeof value === 'string' && value.startsWith('srv/')) impls.push(value)
        else collect(value)
      }
    }
    collect(pkg.cds)
    expect(impls.length).toBeGreaterThan(0)
    expect(impls.filter(impl => !existsSync(join(out, impl)))).toEqual([])
  })

  // The artefact's own app-files.js names the compiled modules: '.js' where the sources name '.ts'.
  test.each(Object.entries(APP_FILES))('%s: %s is there (the modules compiled)', (name, path) => {
    expect(existsSync(join(out, path.replace(/\.ts$/, '.js')))).toBe(true)
    if (name === 'zkKeys') expect(readdirSync(join(out, path)).length).toBeGreaterThan(0)
  })

  test('every server module parses (node --check)', () => {
    const failed = serverModules().flatMap(file => {
      const result = spawnSync(process.execPath, ['--check', join(out, file)], { encoding: 'utf8' })
      return result.status === 0 ? [] : [`${file}: ${result.stderr}`]
    })
    expect(failed).toEqual([])
  })

  test('every module the server loads resolves; the devnets only in the bootstrap, loaded on demand', () => {
    // What npm ci installs at the top: the dependencies, and theirs that it hoists (those the lock puts there).
    const lock = JSON.parse(readFileSync(join(out, 'package-lock.json'), 'utf8'))
    const installed = new Set(Object.keys(lock.packages).filter(path => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path)).map(path => path.slice('node_modules/'.length)))
    // The SQLite database of development and tests: production's configuration loads PostgreSQL instead.
    const notLoadedInProduction: Record<string, string[]> = { 'srv/lib/sqlite-file.js': ['@cap-js/sqlite'] }
    const problems: string[] = []
    for (const file of serverModules()) {
      const source = readFileSync(join(out, file), 'utf8')
      for (const [, kind, specifier] of source.matchAll(/\b(?:(require|import)\s*\(\s*|(?<=\bfrom\s+))["']([^"']+)["']/g)) {
        const problem = unresolved(file, kind, specifier)
        if (problem) problems.push(`${file}: ${problem}`)
      }
    }
    expect(problems).toEqual([])

    function unresolved(file: string, kind: string, specifier: string): string | undefined {
      if (specifier.startsWith('.')) {
        const target = join(dirname(join(out, file)), specifier)
        if (relative(out, target).split(sep)[0] === 'devnet')
          return file === 'srv/server.js' && kind === 'import' ? undefined : `loads a devnet (${specifier})`
        return isFile(target) || isFile(join(target, 'index.js')) ? undefined : `${specifier} is missing`
      }
      if (specifier.startsWith('#cds-models/')) {
        const target = join(out, pkg.imports['#cds-models/*'].replace('*', specifier.slice('#cds-models/'.length)))
        return isFile(target) ? undefined : `${specifier} does not resolve`
      }
      const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
      if (isBuiltin(specifier) || installed.has(name) || notLoadedInProduction[file]?.includes(name)) return undefined
      return `${specifier} is not installed by npm ci`
    }
  })
})

function isFile(path: string) {
  return existsSync(path) && statSync(path).isFile()
}
