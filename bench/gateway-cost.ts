import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { ALICE, BenchDatabase, QUIET, load, progress, readOf, startServer, withKey, type Load, type Server } from './gateway.ts'

/**
 * What a charged call costs next to the same read with the gateway off, on SQLite and on PostgreSQL:
 * the database statements per call by kind (the server counts them, BENCH_COUNT_STATEMENTS), and
 * the CPU self time per call by function and by file or package (a CPU profile of the serving
 * phase, BENCH_PROFILE), with what the gateway adds on top. One server process, 32 clients.
 *
 *   BENCH_ONLY=gateway-cost npm run bench
 */

const CLIENTS = 32
const root = join(process.argv[1] ? join(process.argv[1], '..') : process.cwd(), '..')

interface Measured {
  /** Statements per call by kind, for each load. */
  statements: Map<string, Record<string, number>>
  /** Self time in ms per call by function and by file, over every call the server answered while profiled. */
  byFunction: Map<string, number>
  byFile: Map<string, number>
  calls: number
}

export async function gatewayCostBenchmarks({ seconds }: { seconds: number }) {
  console.log(`what a charged call costs (one server process, ${CLIENTS} clients, ${seconds} s per load)`)
  const directory = mkdtempSync(join(tmpdir(), 'bench-gateway-cost-'))
  try {
    const sqlite = (name: string) => ({ cds_requires_db_credentials_url: join(directory, `${name}.sqlite`) })
    await compare('SQLite', directory, sqlite('on'), sqlite('off'), seconds)
    const database = await BenchDatabase.create()
    try {
      await compare('PostgreSQL', directory, database.env, database.env, seconds)
    } finally {
      await database.remove()
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
  console.log()
}

async function compare(database: string, directory: string, onEnv: Record<string, string>, offEnv: Record<string, string>, seconds: number) {
  progress(`${database}: charged calls through the gateway`)
  const on = await measure(directory, `${database}-on`, { ...onEnv, GATEWAY_ENABLED: 'true', BENCH_KEYS: '100' }, server => ({
    'one key': [withKey(server.keys[0].key)],
    '100 keys': server.keys.map(({ key }) => withKey(key)),
  }), seconds)
  progress(`${database}: the same read with the gateway off`)
  const off = await measure(directory, `${database}-off`, { ...offEnv, GATEWAY_ENABLED: 'false' }, () => ({ 'gateway off': [ALICE] }), seconds)
  printStatements(database, on, off)
  printSelfTime(database, on, off)
}

/** Runs each load against one fresh server, counting statements per load, profiling the whole serving phase. */
async function measure(directory: string, name: string, env: Record<string, string>, loads: (server: Server) => Record<string, Record<string, string>[]>, seconds: number): Promise<Measured> {
  const countsFile = join(directory, `${name}.statements.json`)
  const profileFile = join(directory, `${name}.cpuprofile`)
  const server = await startServer({ ...QUIET, ...env, BENCH_COUNT_STATEMENTS: countsFile, BENCH_PROFILE: profileFile })
  const statements = new Map<string, Record<string, number>>()
  let calls = 0
  try {
    const warm = await load([readOf(server)], Object.values(loads(server))[0], 1, 1)
    calls += warm.calls
    await statementsSince(server, countsFile)
    for (const [label, headers] of Object.entries(loads(server))) {
      const run: Load = await load([readOf(server)], headers, seconds, CLIENTS)
      calls += run.calls
      await new Promise(resolve => setTimeout(resolve, 200))
      const counted = await statementsSince(server, countsFile)
      statements.set(`${label} (${run.perSecond.toFixed(0)}/s, ${run.other} not 200)`, perCall(counted, run.calls))
    }
  } finally {
    await stopForProfile(server, profileFile)
  }
  const { byFunction, byFile } = selfTime(JSON.parse(readFileSync(profileFile, 'utf8')), calls)
  return { statements, byFunction, byFile, calls }
}

/** The server's statement counts since the last time asked (it writes them on SIGUSR2). */
async function statementsSince(server: Server, file: string): Promise<Record<string, number>> {
  rmSync(file, { force: true })
  server.process.kill('SIGUSR2')
  for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise(resolve => setTimeout(resolve, 50))
  return JSON.parse(readFileSync(file, 'utf8'))
}

async function stopForProfile(server: Server, file: string) {
  const exited = new Promise(resolve => server.process.once('exit', resolve))
  server.process.kill('SIGINT')
  await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 30_000))])
  if (!existsSync(file)) server.process.kill('SIGKILL')
}

function perCall(counts: Record<string, number>, calls: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([kind, count]) => [kind, count / calls]))
}

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
}

/** Self time per call, from the profile's samples and their time deltas, by function and by file or package. */
function selfTime(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, calls: number) {
  const nodes = new Map(profile.nodes.map(node => [node.id, node]))
  const byFunction = new Map<string, number>()
  const byFile = new Map<string, number>()
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms)
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame
    // Idle time, and the profiler's own stop at the end.
    if (functionName === '(idle)' || url === 'node:inspector') return
    const ms = (profile.timeDeltas[i] ?? 0) / 1000 / calls
    const file = fileOf(url)
    add(byFunction, `${functionName || '(anonymous)'} ${file}${url ? `:${lineNumber + 1}` : ''}`, ms)
    add(byFile, packageOf(file), ms)
  })
  return { byFunction, byFile }
}

function fileOf(url: string): string {
  if (!url) return ''
  const path = url.replace(/^file:\/\//, '')
  return path.startsWith('/') ? relative(root, path) : path
}

/** A package for code under node_modules, else the file. */
function packageOf(file: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
  return match ? match[1] : file || '(native and runtime)'
}

function printStatements(database: string, on: Measured, off: Measured) {
  const runs = [...on.statements, ...off.statements]
  const all = [...new Set(runs.flatMap(([, counts]) => Object.keys(counts)))].sort()
  const shown = (kind: string) => runs.some(([, counts]) => (counts[kind] ?? 0) >= 0.005)
  const kinds = all.filter(shown)
  const rest = all.filter(kind => !shown(kind))
  console.log(`\n  statements per call, ${database}`)
  console.log(`  | statement | ${runs.map(([label]) => label).join(' | ')} |`)
  console.log(`  |---|${runs.map(() => '---:').join('|')}|`)
  for (const kind of kinds) console.log(`  | ${kind} | ${runs.map(([, counts]) => (counts[kind] ?? 0).toFixed(2)).join(' | ')} |`)
  if (rest.length) console.log(`  | ${rest.length} other kinds (background work) | ${runs.map(([, counts]) => rest.reduce((sum, kind) => sum + (counts[kind] ?? 0), 0).toFixed(2)).join(' | ')} |`)
  console.log(`  | all | ${runs.map(([, counts]) => Object.values(counts).reduce((sum, n) => sum + n, 0).toFixed(2)).join(' | ')} |`)
}

function printSelfTime(database: string, on: Measured, off: Measured) {
  const total = (map: Map<string, number>) => [...map.values()].reduce((sum, ms) => sum + ms, 0)
  console.log(`\n  CPU self time per call, ${database}: ${total(on.byFunction).toFixed(3)} ms charged (${on.calls} calls), ${total(off.byFunction).toFixed(3)} ms gateway off (${off.calls} calls)`)
  for (const [title, a, b, top] of [['file or package', on.byFile, off.byFile, 15], ['function', on.byFunction, off.byFunction, 25]] as const) {
    const added = [...new Set([...a.keys(), ...b.keys()])].map(key => ({ key, on: a.get(key) ?? 0, off: b.get(key) ?? 0 }))
      .sort((x, y) => (y.on - y.off) - (x.on - x.off)).slice(0, top)
    console.log(`\n  | ${title} (most added first) | charged ms/call | off ms/call | added ms/call |`)
    console.log('  |---|---:|---:|---:|')
    for (const row of added) console.log(`  | \`${row.key}\` | ${row.on.toFixed(3)} | ${row.off.toFixed(3)} | ${(row.on - row.off).toFixed(3)} |`)
  }
}
