import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MCP_PACKAGE, MCP_SERVERS, mcpTarballName } from './names.ts'

/**
 * `npm run build:mcp`: the tool servers as an npm package that needs neither this project nor a
 * registry. The TypeScript is compiled to JavaScript (ESM) in gen/mcp/package/lib, the package's
 * dependencies (the MCP SDK and zod, at the versions installed here) are copied in with everything
 * they need at run time and bundled, and `npm pack` makes gen/mcp/chain-access-mcp-<version>.tgz,
 * which the gateway serves and the configuration printed with a key names.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const OUT_DIR = join(ROOT, 'gen', 'mcp')

/** The packages the tool servers import; each is bundled at its installed version. */
const DEPENDENCIES = ['@modelcontextprotocol/sdk', 'zod'] as const

/** The oldest Node the packed servers are tested on (test/mcp/package.test.ts runs them on the system's Node). */
const NODE_ENGINES = '>=20'

interface PackageJson {
  name: string
  version: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

export interface PackResult {
  tarball: string
  version: string
  bytes: number
  files: number
  packages: number
}

const step = (text: string) => process.stdout.write(`build:mcp: ${text}\n`)

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T

/** Makes the package and its tarball; `outDir` is gen/mcp unless a caller names another. */
export function packMcpServers(outDir = OUT_DIR): PackResult {
  // Staged in a folder of this build's own: two builds at once (two test runs, say) never remove
  // each other's files, and the tarball each makes is renamed into place whole. The staging
  // folder then becomes outDir/package, kept for inspection.
  const staging = join(outDir, `package.${process.pid}`)
  const { version } = readJson<PackageJson>(join(ROOT, 'package.json'))
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  try {
    const result = buildInto(staging, outDir, version)
    keepForInspection(staging, join(outDir, 'package'))
    return result
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** The staged files as outDir/package; a build finishing at the same moment may win instead, which is as good. */
function keepForInspection(staging: string, kept: string) {
  try {
    rmSync(kept, { recursive: true, force: true })
    renameSync(staging, kept)
  } catch {
    // the other build's folder is there: the same files
  }
}

function buildInto(staging: string, outDir: string, version: string): PackResult {
  step('compiling mcp/**/*.ts to JavaScript')
  compile(join(staging, 'lib'))

  step('writing package.json and the bins')
  const versions = Object.fromEntries(DEPENDENCIES.map(name => [name, installedManifest(ROOT, name).version]))
  writeBins(staging)
  writePackageJson(staging, version, versions)

  step(`copying ${DEPENDENCIES.join(' and ')} with their dependencies`)
  const packages = copyDependencyClosure(staging)
  step(`${packages} packages copied`)

  step('npm pack')
  const packed = pack(staging, outDir, version)
  const result = { ...packed, version, packages }
  step(`${relative(ROOT, result.tarball)}: ${(result.bytes / 1024 / 1024).toFixed(2)} MB, ${result.files} files`)
  return result
}

function compile(libDir: string) {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'mcp', 'tsconfig.pack.json'), '--outDir', libDir], { cwd: ROOT, stdio: 'inherit' })
}

/** Each bin imports its compiled server, which runs on import. */
function writeBins(staging: string) {
  mkdirSync(join(staging, 'bin'), { recursive: true })
  for (const [server, bin] of Object.entries(MCP_SERVERS)) {
    writeFileSync(join(staging, 'bin', `${bin}.js`), `#!/usr/bin/env node\nimport '../lib/${server}/server.js'\n`, { mode: 0o755 })
  }
}

function writePackageJson(staging: string, version: string, versions: Record<string, string>) {
  const manifest = {
    name: MCP_PACKAGE,
    version,
    description: 'MCP tool servers for the chain-access gateway: chain A (Cardano) and chain B (Midnight)',
    license: 'UNLICENSED',
    type: 'module',
    bin: Object.fromEntries(Object.values(MCP_SERVERS).map(bin => [bin, `bin/${bin}.js`])),
    files: ['bin', 'lib'],
    engines: { node: NODE_ENGINES },
    dependencies: versions,
    bundleDependencies: [...DEPENDENCIES],
  }
  writeFileSync(join(staging, 'package.json'), JSON.stringify(manifest, null, 2) + '\n')
}

/** The package.json of `name` as Node resolves it from `fromDir`: the nearest node_modules/<name> up the tree. */
function resolvePackage(fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(dir) === dir || !dir.startsWith(ROOT)) return undefined
  }
}

function installedManifest(fromDir: string, name: string): PackageJson {
  const dir = resolvePackage(fromDir, name)
  if (!dir) throw new Error(`${name} is not installed (run npm ci)`)
  return readJson<PackageJson>(join(dir, 'package.json'))
}

/** What a package needs at run time: its dependencies, the optional ones that are installed, and its required peers. */
function runtimeDependencies(manifest: PackageJson): { name: string; required: boolean }[] {
  const peers = Object.keys(manifest.peerDependencies ?? {})
  return [
    ...Object.keys(manifest.dependencies ?? {}).map(name => ({ name, required: true })),
    ...Object.keys(manifest.optionalDependencies ?? {}).map(name => ({ name, required: false })),
    ...peers.map(name => ({ name, required: !manifest.peerDependenciesMeta?.[name]?.optional })),
  ]
}

/**
 * Copies the dependencies and everything they need, each from where Node finds it in this
 * project's node_modules to the same place under the staging folder (a nested node_modules stays
 * nested), so Node resolves each import in the package as it does here. Returns how many packages.
 */
function copyDependencyClosure(staging: string): number {
  const found = new Set<string>()
  const pending: string[] = []
  const add = (fromDir: string, name: string, required: boolean) => {
    const dir = resolvePackage(fromDir, name)
    if (!dir) {
      if (required) throw new Error(`${name}, needed by ${relative(ROOT, fromDir) || 'the package'}, is not installed`)
      return
    }
    if (found.has(dir)) return
    found.add(dir)
    pending.push(dir)
  }
  for (const name of DEPENDENCIES) add(ROOT, name, true)
  while (pending.length) {
    const dir = pending.pop()!
    for (const { name, required } of runtimeDependencies(readJson<PackageJson>(join(dir, 'package.json')))) add(dir, name, required)
  }
  for (const dir of found) {
    const target = join(staging, relative(ROOT, dir))
    cpSync(dir, target, { recursive: true, filter: source => !isNestedModules(dir, source) })
  }
  return found.size
}

/** A package's own node_modules (and .bin) are copied only as far as the closure reaches into them. */
const isNestedModules = (packageDir: string, source: string) => source.startsWith(join(packageDir, 'node_modules') + sep) || source === join(packageDir, 'node_modules')

/** `npm pack` in the staging folder; the tarball replaces any earlier one in `outDir` at once (renamed into place). */
function pack(staging: string, outDir: string, version: string): { tarball: string; bytes: number; files: number } {
  const packDir = join(outDir, `.pack.${process.pid}`)
  rmSync(packDir, { recursive: true, force: true })
  mkdirSync(packDir, { recursive: true })
  const output = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], {
    cwd: staging,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  })
  const [report] = JSON.parse(output) as { filename: string; entryCount: number }[]
  const name = mcpTarballName(version)
  for (const earlier of readdirSync(outDir).filter(file => file.endsWith('.tgz') && file !== name)) rmSync(join(outDir, earlier))
  const tarball = join(outDir, name)
  renameSync(join(packDir, report.filename), tarball)
  rmSync(packDir, { recursive: true, force: true })
  return { tarball, bytes: statSync(tarball).size, files: report.entryCount }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) packMcpServers()
