import cds from '@sap/cds'
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'

/**
 * The Cloud Foundry build as the MTA build tool runs it, made once for both tests that need it
 * (test/production/build.test.ts checks the artefact, test/postgres/deployment.test.ts deploys
 * it): each command of mta.yaml's build split into words and run without a shell, in a copy of
 * the project (the checkout's files as git lists them, node_modules linked), with the caller's
 * settings of the app, CAP and the test run removed. The build's gen/ and each command's status
 * and output are kept in node_modules/.cache/cag-cf-build/<key>, the key a SHA-256 of the copied
 * files (paths and contents) and the Node version, the way srv/lib/model-cache.ts keys the compiled
 * model: any change to an input builds anew, and npm ci (which empties node_modules) starts over.
 * Two jest workers asking at once build it once: the first holds a lock file, the other waits.
 * Only a build whose commands all succeeded is kept; a failed one is given to its caller alone.
 */

const root = resolve(__dirname, '..', '..')
const cacheRoot = join(root, 'node_modules', '.cache', 'cag-cf-build')
/** What the build makes or never reads, left out of the copy (git's ignored files are left out too). node_modules is linked. */
const NOT_COPIED = new Set(['node_modules', '.git', 'gen', '@cds-models', 'data', 'coverage', '.artifacts', '.ci'])

/** CAP's YAML parser (cds.utils.yaml), which its type declarations leave out. */
const { yaml } = cds.utils as unknown as { yaml: { parse(text: string): any } }

export interface BuildCommand {
  command: string
  words: string[]
}

export interface CommandRun {
  command: string
  status: number | null
  output: string
}

export interface CloudFoundryBuild {
  /** The build's gen folder: gen/srv, gen/pg. Read it or copy it; never change it (the next caller reads it too). */
  gen: string
  /** mta.yaml's commands as run (npm ci left out: this checkout has its dependencies installed, and the copy links them). */
  runs: CommandRun[]
}

/** mta.yaml's build commands, in the order the build tool runs them. */
export function buildCommands(): BuildCommand[] {
  const mta = yaml.parse(readFileSync(join(root, 'mta.yaml'), 'utf8'))
  const steps = [...(mta['build-parameters']?.['before-all'] ?? []), ...(mta['build-parameters']?.['after-all'] ?? [])]
  for (const module of mta.modules ?? []) steps.push(module['build-parameters'] ?? {})
  return steps.flatMap((step: { commands?: string[] }) => step.commands ?? [])
    .map((command: string) => ({ command, words: command.trim().split(/\s+/) }))
}

/** The build's gen/ and each command's outcome: from the cache when these inputs were built before, else built now. */
export async function cloudFoundryBuild(): Promise<CloudFoundryBuild> {
  const files = inputFiles()
  const key = keyOf(files)
  const folder = join(cacheRoot, key)
  const lock = join(cacheRoot, `${key}.lock`)
  mkdirSync(cacheRoot, { recursive: true })
  for (;;) {
    if (existsSync(join(folder, 'runs.json'))) return { gen: join(folder, 'gen'), runs: JSON.parse(readFileSync(join(folder, 'runs.json'), 'utf8')) }
    if (!takeLock(lock)) {
      await new Promise(resolve => setTimeout(resolve, 1000))
      continue
    }
    try {
      if (existsSync(join(folder, 'runs.json'))) continue
      return await build(files, folder)
    } finally {
      rmSync(lock, { force: true })
    }
  }
}

/** The project's files relative to its root: tracked and untracked ones, not those git ignores, nor the folders never copied. */
function inputFiles(): string[] {
  let listed: string[]
  try {
    listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\0')
  } catch {
    // Not a git checkout: every file but the folders never copied.
    listed = readdirSync(root, { recursive: true, withFileTypes: true }).filter(entry => entry.isFile())
      .map(entry => join(entry.parentPath, entry.name).slice(root.length + 1))
  }
  return listed
    .filter(path => path && !NOT_COPIED.has(path.split('/')[0]) && !path.startsWith('.tmp') && existsSync(join(root, path)))
    .sort()
}

function keyOf(files: string[]): string {
  const hash = createHash('sha256').update(`node ${process.version}\0`)
  for (const path of files) hash.update(`${path}\0`).update(readFileSync(join(root, path))).update('\0')
  return hash.digest('hex').slice(0, 32)
}

/** The lock file, made with this process's id; a lock whose process has ended is removed. */
function takeLock(lock: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const holder = Number(readFileSync(lock, 'utf8') || NaN)
  if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
    // Read again just before removing it: another waiter may have replaced the stale lock meanwhile.
    if (readFileSync(lock, 'utf8') === String(holder)) rmSync(lock, { force: true })
  }
  return false
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The caller's environment without any setting of the app, of CAP or of the test run; the project's Node first on PATH. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const name of Object.keys(env)) if (/^(NODE_|CDS_|cds_|CHAIN_|BLOCKFROST_|GATEWAY_|DEVNET_|VCAP_|QUERY_|HSM_|ANALYTICS_|JEST_|npm_)/.test(name)) delete env[name]
  return { ...env, PATH: [dirname(process.execPath), join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter) }
}

function runCommand(program: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise(done => {
    let output = ''
    const child = spawn(program, args, { cwd, env, shell: false, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', chunk => (output += chunk))
    child.stderr.on('data', chunk => (output += chunk))
    child.on('error', error => (output += String(error)))
    child.on('close', status => done({ status, output }))
  })
}

async function build(files: string[], folder: string): Promise<CloudFoundryBuild> {
  const work = mkdtempSync(join(tmpdir(), 'cag-build-'))
  try {
    const project = join(work, 'project')
    for (const path of files) cpSync(join(root, path), join(project, path))
    symlinkSync(join(root, 'node_modules'), join(project, 'node_modules'))
    const env = cleanEnvironment()
    const runs: CommandRun[] = []
    for (const { command, words: [program, ...args] } of buildCommands()) {
      if (command === 'npm ci') continue
      runs.push({ command, ...await runCommand(program, args, project, env) })
    }
    // Staged beside the cache's folder and renamed into place: a reader never sees half of it.
    const staging = mkdtempSync(join(cacheRoot, 'staging-'))
    if (existsSync(join(project, 'gen'))) cpSync(join(project, 'gen'), join(staging, 'gen'), { recursive: true })
    writeFileSync(join(staging, 'runs.json'), JSON.stringify(runs))
    if (runs.every(run => run.status === 0)) {
      // The builds of earlier inputs are of no more use (one is about 40 MB).
      for (const name of readdirSync(cacheRoot)) if (/^[0-9a-f]{32}$/.test(name)) rmSync(join(cacheRoot, name), { recursive: true, force: true })
      renameSync(staging, folder)
      return { gen: join(folder, 'gen'), runs }
    }
    return { gen: join(staging, 'gen'), runs }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
