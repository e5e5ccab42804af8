/**
 * npm run build:cf [-- --zk-keys <folder>]
 *
 * The Cloud Foundry build, in one command (mta.yaml runs it): gen/srv, the service, and gen/pg,
 * the PostgreSQL deployer, each complete and ready to push. gen/srv holds what production runs and
 * nothing else: the CDS model and OData metadata (cds build), the services, the request pipeline
 * plugin and the MCP names compiled to JavaScript (tsconfig.build.json), the generated entity
 * proxies (@cds-models), the files the server reads at run time (srv/lib/app-files.ts: the portal,
 * the GraphQL schema, the circuits' keys), and a package.json with the production dependencies.
 * The circuits' keys are zk/keys (the development keys, which production refuses unless told) or,
 * with --zk-keys, the operator's keys from a ceremony, checked as a production start checks them.
 */
import { spawnSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { APP_FILES, BUILT_FILES } from '../srv/lib/app-files.ts'
import { zkKeysToShip } from './zk-keys.ts'

const root = resolve(import.meta.dirname, '..')
const srv = join(root, 'gen/srv')
const pg = join(root, 'gen/pg')

/** The Node versions the artefact is known to run on (require of ES modules, unflagged from 22.12). */
const ENGINES = { node: '>=22.12 <25' }

/** Dependencies the service never loads in production: SQLite (production runs on PostgreSQL), the MCP tool servers' (they run beside the agent, not in the service), the development signer's. */
const NOT_IN_PRODUCTION = ['@cap-js/sqlite', '@modelcontextprotocol/sdk', 'zod', '@emurgo/cardano-message-signing-nodejs']

/** Folders of the sources that compile with the services but never run in production. */
const DEVELOPMENT_ONLY = ['devnet', 'test', 'bench']

function main() {
  const { values: args } = parseArgs({ options: { 'zk-keys': { type: 'string' } } })
  const zkKeys = zkKeysToShip(args['zk-keys'], join(root, APP_FILES.zkKeys))
  step('cds build --production (gen/srv: model and metadata; gen/pg: the deployer)')
  rmSync(join(root, 'gen'), { recursive: true, force: true })
  // cds build refreshes gen/srv's lock with npm; offline, from the cache npm ci filled (the lock is written anew below).
  run('cds', 'build', '--production', { npm_config_offline: 'true' })
  step('cds-typer (@cds-models, the entity proxies)')
  run('npm', 'run', '-s', 'typer')
  step('tsc -p tsconfig.build.json (services, request pipeline, MCP names)')
  run('tsc', '-p', 'tsconfig.build.json')
  step('JavaScript only: sources, tests and development code removed')
  removeDevelopmentFiles()
  copyModuleFiles()
  step('the files the server reads at run time (srv/lib/app-files.ts)')
  copyAppFiles(zkKeys)
  step('the MCP tool servers\' package, which the service serves at /mcp (npm run build:mcp)')
  run('npm', 'run', '-s', 'build:mcp')
  copyBuiltFiles()
  step('package.json of gen/srv and gen/pg (production dependencies, engines)')
  writeServicePackage()
  writeDeployerPackage()
  const { files, bytes } = measure(srv)
  console.log(`\nbuild:cf: gen/srv ${files} files, ${(bytes / 1e6).toFixed(1)} MB (without node_modules); gen/pg ready`)
}

function step(text: string) {
  console.log(`\n== ${text}`)
}

/** Runs a tool of this project (node_modules/.bin) or npm, in the project root, without a shell; the last argument may add to the environment. */
function run(tool: string, ...args: (string | NodeJS.ProcessEnv)[]) {
  const env = typeof args.at(-1) === 'object' ? (args.pop() as NodeJS.ProcessEnv) : {}
  const words = args as string[]
  const local = join(root, 'node_modules/.bin', tool)
  const result = spawnSync(existsSync(local) ? local : tool, words, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } })
  if (result.status !== 0) throw new Error(`${tool} ${words.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`)
}

/** cds build copies the TypeScript sources and the root's test set-up; tsc has put their JavaScript beside them. */
function removeDevelopmentFiles() {
  for (const folder of DEVELOPMENT_ONLY) rmSync(join(srv, folder), { recursive: true, force: true })
  rmSync(join(srv, 'jest.config.js'), { force: true })
  for (const file of filesUnder(srv)) if (file.endsWith('.ts')) rmSync(file)
}

/**
 * Beside the compiled modules: the plugin's package (CAP finds it by its cds-plugin.js), the
 * package.json that makes mcp/ ES modules, and the entity proxies cds-typer wrote as JavaScript
 * (tsc compiled their type declarations too: those are replaced).
 */
function copyModuleFiles() {
  cpSync(join(root, 'plugins'), join(srv, 'plugins'), { recursive: true, filter: source => !source.endsWith('.ts') })
  if (existsSync(join(srv, 'mcp'))) cpSync(join(root, 'mcp/package.json'), join(srv, 'mcp/package.json'))
  const models = join(root, '@cds-models')
  rmSync(join(srv, '@cds-models'), { recursive: true, force: true })
  for (const file of filesUnder(models)) if (file.endsWith('.js')) cpSync(file, join(srv, '@cds-models', relative(models, file)))
}

/** Each file the server reads: a module must have been compiled, anything else is copied (the keys from `zkKeys`, only when they are there). */
function copyAppFiles(zkKeys: string) {
  for (const [name, path] of Object.entries(APP_FILES)) {
    const source = name === 'zkKeys' ? zkKeys : join(root, path)
    if (path.endsWith('.ts')) {
      const compiled = path.replace(/\.ts$/, '.js')
      if (!existsSync(join(srv, compiled))) throw new Error(`${name}: ${compiled} was not compiled`)
      console.log(`${name}: ${compiled} (compiled)`)
    } else if (existsSync(source)) {
      cpSync(source, join(srv, path), { recursive: true, dereference: true })
      console.log(`${name}: ${path}${source === join(root, path) ? '' : ` (from ${source})`}`)
    } else if (name === 'zkKeys') {
      console.log(`${name}: ${path} is absent, so the artefact has no circuits' keys: make production keys with the ceremony (npm run ceremony; docs/security.md) and build with --zk-keys <folder>`)
    } else {
      throw new Error(`${name}: ${path} is missing`)
    }
  }
}

/** The files made by a build step that the server serves (srv/lib/app-files.ts BUILT_FILES), without their staging folders. */
function copyBuiltFiles() {
  for (const [name, path] of Object.entries(BUILT_FILES)) {
    cpSync(join(root, path), join(srv, path), { recursive: true, filter: source => !relative(join(root, path), source).startsWith('package') })
    console.log(`${name}: ${path}`)
  }
}

/**
 * The service's package.json: the root's, with the dependencies production loads, `cds-serve` to
 * start, the `#cds-models` alias on the JavaScript proxies, and the CDS configuration (CAP reads
 * it from here) naming the compiled implementations.
 */
function writeServicePackage() {
  const source = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const dependencies = Object.fromEntries(Object.entries(source.dependencies).filter(([name]) => !NOT_IN_PRODUCTION.includes(name)))
  const pkg = {
    name: source.name,
    version: source.version,
    description: source.description,
    private: true,
    license: source.license,
    engines: ENGINES,
    imports: { '#cds-models/*': './@cds-models/*/index.js' },
    scripts: { start: 'cds-serve' },
    dependencies,
    overrides: source.overrides,
    cds: withCompiledImplementations(source.cds),
  }
  writeFileSync(join(srv, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  // The root's lock lists the development dependencies too: npm makes the service's from it.
  run('npm', 'install', '--package-lock-only', '--offline', '--no-audit', '--no-fund', '--prefix', srv)
  console.log(`gen/srv/package.json: ${Object.keys(dependencies).length} dependencies (left out: ${NOT_IN_PRODUCTION.join(', ')})`)
}

/** Every `impl` of the CDS configuration that names one of the app's TypeScript files names its JavaScript. */
function withCompiledImplementations(config: unknown): unknown {
  if (Array.isArray(config)) return config.map(withCompiledImplementations)
  if (config === null || typeof config !== 'object') return config
  return Object.fromEntries(Object.entries(config).map(([key, value]) =>
    [key, key === 'impl' && typeof value === 'string' && value.startsWith('srv/') ? value.replace(/\.ts$/, '.js') : withCompiledImplementations(value)]))
}

/**
 * The deployer: CAP's, started as db/deploy.js (CAP's `cds-deploy` prints the database password),
 * with the seed rows that db/init.js adds only where their key is missing (an operator's changes
 * survive a redeploy).
 */
function writeDeployerPackage() {
  for (const path of ['db/deploy.js', 'db/init.js', 'db/seed']) cpSync(join(root, path), join(pg, path), { recursive: true })
  const file = join(pg, 'package.json')
  const pkg = JSON.parse(readFileSync(file, 'utf8'))
  writeFileSync(file, `${JSON.stringify({ engines: ENGINES, ...pkg, scripts: { ...pkg.scripts, start: 'node db/deploy.js' } }, null, 2)}\n`)
  // Its lock, made from the root's as the service's is, so that npm ci installs the versions tested.
  cpSync(join(root, 'package-lock.json'), join(pg, 'package-lock.json'))
  run('npm', 'install', '--package-lock-only', '--offline', '--no-audit', '--no-fund', '--prefix', pg)
  console.log('gen/pg/package.json: engines', ENGINES.node, '; start: node db/deploy.js (the schema, then the missing seed rows); its package-lock.json')
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter(entry => entry.isFile())
    .map(entry => join(entry.parentPath, entry.name))
}

function measure(folder: string) {
  const files = filesUnder(folder).filter(file => !relative(folder, file).startsWith('node_modules'))
  return { files: files.length, bytes: files.reduce((sum, file) => sum + statSync(file).size, 0) }
}

try {
  main()
} catch (error) {
  console.error(`build:cf: ${error instanceof Error ? error.message : error}`)
  process.exitCode = 1
}
