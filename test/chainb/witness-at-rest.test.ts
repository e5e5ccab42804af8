import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from 'pg'
import { slotSalt } from '../../srv/chains/chain-b/zk/content.ts'
import { fieldHex } from '../../srv/chains/chain-b/zk/field.ts'
import { stopAndWait, type RunningServer } from '../support/server.ts'
import { CHAINB, client, type Answer } from './attest.ts'
import { onPostgres, ROOT, startAppServer, startStandaloneChainB, waitFor, type StandaloneChainB } from './support.ts'

/**
 * No witness at rest: a claim's hidden inputs (the fields' values and salts, an opening's salt
 * seed) pass through the memory of the process that accepted the request only. Spawned hosted
 * servers (gateway on) on a standalone chain-B devnet whose blocks come when the test asks; the
 * database is a SQLite file whose bytes (main file, WAL, journal) are searched, or on PostgreSQL
 * every table's rows as text (dead tuples there hold only the sealed witness, whose key is gone).
 */

const execute = promisify(execFile)

const hosted: NodeJS.ProcessEnv = { GATEWAY_ENABLED: 'true', GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000', CHAIN_B_ZK_PROVERS: '1' }

/** A key issued with the operator's command line, on the database `env` names. */
async function issueKey(env: NodeJS.ProcessEnv, units: number): Promise<string> {
  const { stdout } = await execute(process.execPath, ['srv/cli.ts', 'keys', 'issue', '--units', String(units), '--quiet'], {
    cwd: ROOT, env: { ...process.env, ...env, CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
  })
  return /cag_\S+/.exec(stdout)![0]
}

/** A SQLite file of its own for a group of tests (on PostgreSQL the test file's database). */
function databaseOf(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (onPostgres()) return undefined
  const folder = mkdtempSync(join(tmpdir(), `cag-chainb-${name}-`))
  env.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, `${name}.sqlite`)
  return folder
}

/**
 * Which of `needles` the database holds anywhere: on SQLite in the bytes of its file, its WAL and
 * its journal (free pages and old page versions included); on PostgreSQL in any table's rows.
 */
async function foundInDatabase(env: NodeJS.ProcessEnv, needles: string[]): Promise<string[]> {
  let haystacks: string[]
  if (onPostgres()) {
    const database = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: process.env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE! })
    await database.connect()
    try {
      const { rows: tables } = await database.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
      haystacks = []
      for (const { table_name: table } of tables) {
        const { rows } = await database.query(`SELECT t::text AS "row" FROM "${table.replace(/"/g, '""')}" t`)
        haystacks.push(...rows.map(row => row.row as string))
      }
    } finally {
      await database.end()
    }
  } else {
    const file = env.CDS_REQUIRES_DB_CREDENTIALS_URL!
    haystacks = ['', '-wal', '-journal', '-shm'].map(suffix => file + suffix).filter(existsSync).map(path => readFileSync(path).toString('latin1'))
  }
  return needles.filter(needle => haystacks.some(haystack => haystack.includes(needle)))
}

interface Prepared { payloadHash: string; contentRoot: string; schemaId: string; opening: { saltSeed: string }; fields: { field: string; fieldKey: string; value: string; scale: string; salt: string; siblings: string[]; dirs: boolean[] }[] }

/** What a document's witness hides: its salt seed, and every slot's salt as hex and as the decimal text a circuit input carries. */
function secretsOf(document: Prepared): string[] {
  const salts = Array.from({ length: 16 }, (_, slot) => slotSalt(document.opening.saltSeed, slot))
  return [document.opening.saltSeed, ...salts.map(fieldHex), ...salts.map(String)]
}

const witnessOf = (document: Prepared, path: string) => {
  const field = document.fields.find(candidate => candidate.field === path)!
  return { payloadHash: document.payloadHash, fieldKey: field.fieldKey, fieldSalt: field.salt, siblingsJson: JSON.stringify(field.siblings), dirsJson: JSON.stringify(field.dirs) }
}
const numericClaim = (document: Prepared, path: string, predicate: string, threshold: string) => {
  const field = document.fields.find(candidate => candidate.field === path)!
  return { ...witnessOf(document, path), value: field.value, scale: field.scale, predicate, threshold }
}

type Caller = ReturnType<typeof client>

/** Follows a job, producing a block whenever it waits on the chain, until it is confirmed or failed. */
async function settledJob(devnet: StandaloneChainB, caller: Caller, jobId: string) {
  return waitFor(`job ${jobId} settled`, async () => {
    const { data } = await caller.post(`${CHAINB}/getJobStatus`, { jobId })
    if (data.status === 'submitted') await devnet.produce(1)
    else await new Promise(resolve => setTimeout(resolve, 50))
    return ['confirmed', 'failed'].includes(data.status) && data
  }, 120_000)
}

const expectConfirmed = async (devnet: StandaloneChainB, caller: Caller, accepted: Answer) => {
  expect(accepted.data.error).toBeUndefined()
  expect(accepted.status).toBe(200)
  const job = await settledJob(devnet, caller, accepted.data.jobId)
  expect(job).toMatchObject({ status: 'confirmed', errorCode: null })
  return job
}

/** prepareDocumentProof (a fresh salt seed), then anchorDocument with the document (the service computes its content root), confirmed. */
async function anchoredDocument(devnet: StandaloneChainB, caller: Caller, document: object, fields: unknown[]): Promise<Prepared> {
  const documentJson = JSON.stringify(document)
  const proofFieldsJson = JSON.stringify(fields)
  const prepared = await caller.post(`${CHAINB}/prepareDocumentProof`, { documentJson, proofFieldsJson })
  expect(prepared.status).toBe(200)
  const { payloadHash, opening } = prepared.data as Prepared
  await expectConfirmed(devnet, caller, await caller.post(`${CHAINB}/anchorDocument`, { sha256: payloadHash, documentJson, proofFieldsJson, saltSeed: opening.saltSeed }))
  return prepared.data
}

const INVOICE = { id: 'INV-9', total: 1234.5, currency: 'EUR', buyer: { country: 'DE', vatId: 'DE987' }, lines: 3 }
const FIELDS = ['total', 'currency', 'buyer.country', 'buyer.vatId', { field: 'lines', scale: 1 }]

describe('a proof and a batch proven to completion: the database holds none of their salts', () => {
  const env: NodeJS.ProcessEnv = { ...hosted }
  let folder: string | undefined
  let devnet: StandaloneChainB
  let server: RunningServer | undefined
  let key: string

  beforeAll(async () => {
    folder = databaseOf('witness', env)
    // Before the server starts: on SQLite the command line makes the database file the server then opens.
    key = await issueKey(env, 5000)
    devnet = await startStandaloneChainB()
    server = await startAppServer(devnet, env)
  }, 120_000)
  afterAll(async () => {
    if (server?.running()) await stopAndWait(server)
    await devnet?.stop()
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  test('a field predicate, and a batch of a predicate, an equality and a document comparison (both openings)', async () => {
    const caller = client(server!.url, key)
    const invoice = await anchoredDocument(devnet, caller, INVOICE, FIELDS)
    const revised = await anchoredDocument(devnet, caller, { ...INVOICE, total: 999, lines: 4 }, FIELDS)

    await expectConfirmed(devnet, caller, await caller.post(`${CHAINB}/issueFieldPredicateAttestation`, numericClaim(invoice, 'total', 'greaterOrEqual', '1000')))
    const claims = [
      numericClaim(revised, 'total', 'lessOrEqual', '1000'),
      { ...witnessOf(revised, 'currency'), predicate: 'bytesEquality', expectedValue: 'EUR' },
      { predicate: 'documentIntegrity', payloadHashA: invoice.payloadHash, payloadHashB: revised.payloadHash, allowedMask: (1 << 0) | (1 << 4), openingAJson: JSON.stringify(invoice.opening), openingBJson: JSON.stringify(revised.opening) },
    ]
    const batch = await caller.post(`${CHAINB}/issueFieldPredicateAttestationBatch`, { payloadHash: revised.payloadHash, claimsJson: JSON.stringify(claims) })
    expect(batch.data.claims).toHaveLength(3)
    await expectConfirmed(devnet, caller, batch)

    const secrets = [...secretsOf(invoice), ...secretsOf(revised)]
    // The search reads the server's database: the public payload hashes are there.
    expect(await foundInDatabase(env, [invoice.payloadHash, revised.payloadHash])).toHaveLength(2)
    expect(await foundInDatabase(env, secrets)).toEqual([])
    // Nor did the server log them.
    expect(secrets.filter(secret => server!.output().includes(secret))).toEqual([])
  }, 300_000)
})

describe('the process holding a witness restarts before proving it', () => {
  // The accepting server runs no jobs, so the job is certainly still queued when it is killed.
  const env: NodeJS.ProcessEnv = { ...hosted, CHAIN_B_JOBS_WITNESS_HOLD_MS: '2000' }
  let folder: string | undefined
  let devnet: StandaloneChainB
  const servers: RunningServer[] = []
  let key: string

  beforeAll(async () => {
    folder = databaseOf('witness-lost', env)
    key = await issueKey(env, 5000)
    devnet = await startStandaloneChainB()
  }, 120_000)
  afterAll(async () => {
    for (const server of servers) if (server.running()) await stopAndWait(server)
    await devnet?.stop()
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  test('the job fails WITNESS_LOST, its charge is refunded, a replay answers that job, and asking again proves the claim', async () => {
    const first = await startAppServer(devnet, env)
    servers.push(first)
    const invoice = await anchoredDocument(devnet, client(first.url, key), INVOICE, FIELDS)
    await stopAndWait(first)

    const holder = await startAppServer(devnet, { ...env, CHAIN_B_JOBS_RUNNER: 'false' })
    servers.push(holder)
    const body = { ...numericClaim(invoice, 'total', 'greaterOrEqual', '1000'), idempotencyKey: 'total-at-least-1000' }
    const accepted = await client(holder.url, key).post(`${CHAINB}/issueFieldPredicateAttestation`, body)
    expect(accepted.data).toMatchObject({ status: 'queued', jobId: expect.any(String) })
    expect(accepted.charged).toBe('50')
    const { jobId } = accepted.data
    // Queued, its witness in the holder's memory: the database has it sealed, not in plain text.
    expect(await foundInDatabase(env, [jobId])).toEqual([jobId])
    expect(await foundInDatabase(env, secretsOf(invoice))).toEqual([])
    // The charge is written before the holder dies (a pending one would be voided by the sweeper instead).
    await waitFor('the charge committed', async () => {
      const { data } = await client(holder.url, key).get('/me/ledger')
      return data.value.some((entry: { kind: string; route: string; state: string }) => entry.kind === 'charge' && entry.route.includes('issueFieldPredicateAttestation') && entry.state === 'committed')
    })
    holder.stop('SIGKILL')
    await holder.exited

    const restarted = await startAppServer(devnet, env)
    servers.push(restarted)
    const caller = client(restarted.url, key)
    const job = await settledJob(devnet, caller, jobId)
    expect(job).toMatchObject({ status: 'failed', errorCode: 'WITNESS_LOST', errorMessage: expect.stringContaining('ask again') })
    // Not the caller's doing: refunded through the request that queued it, once.
    const refund = await waitFor('the refund', async () => {
      const { data } = await caller.get('/me/ledger?limit=100')
      return data.value.find((entry: { kind: string; outcome: string }) => entry.kind === 'refund' && entry.outcome === 'job WITNESS_LOST')
    })
    expect(refund.units).toBe(50)
    const { data: ledger } = await caller.get('/me/ledger?limit=100')
    expect(ledger.value.filter((entry: { requestId: string }) => entry.requestId === refund.requestId).map((entry: { kind: string; state: string }) => [entry.kind, entry.state]).sort())
      .toEqual([['charge', 'refunded'], ['refund', 'posted']])
    const { data: attestation } = await caller.get(`${CHAINB}/Attestations(${accepted.data.attestationId})`)
    expect(attestation.status).toBe('failed')

    // The same key and payload answer that job, uncharged.
    const replay = await caller.post(`${CHAINB}/issueFieldPredicateAttestation`, body)
    expect(replay.data).toMatchObject({ jobId, attestationId: accepted.data.attestationId })
    expect(replay.headers['x-idempotent-replay']).toBe('true')
    expect(replay.charged).toBe('0')

    // Asked again, the claim is proven by the process that holds its witness now.
    await expectConfirmed(devnet, caller, await caller.post(`${CHAINB}/issueFieldPredicateAttestation`, { ...body, idempotencyKey: 'total-at-least-1000-again' }))
    expect(await foundInDatabase(env, secretsOf(invoice))).toEqual([])
  }, 300_000)
})
