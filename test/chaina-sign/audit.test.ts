import cds from '@sap/cds'
import { join } from 'node:path'
import { runningDevnet } from '../support/chain-a.ts'
import { startServer, type RunningServer } from '../support/server.ts'
import { witnessSetOf } from '../support/sign.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'
import { SIGN, TX, buildTransfer } from './support.ts'

const app = cds.test(__dirname + '/../..')
const { POST, PATCH, DELETE: DEL, defaults } = app
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const onPostgres = (process.env.CDS_ENV ?? '').split(',').includes('pg')
let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-4')
  other = devnet.wallets()[0].address
  // Enough separate outputs for many pending builds at once.
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, wallet.address)], outputs: Array.from({ length: 44 }, () => ({ address: wallet.address, coin: 20n * ADA })), signers: [wallet.payment] }))
  devnet.produceBlock()
})

const auditLog = async (signingRequestId?: string) => (await POST(`${SIGN}/GetAuditLog`, signingRequestId ? { signingRequestId } : {})).data

/** Consecutive sequences from 1, each entry chained to the one before. */
function expectGapFree(entries: any[]) {
  expect(entries.map(entry => entry.sequence)).toEqual(entries.map((_, i) => i + 1))
  entries.forEach((entry, i) => expect(entry.previousHash).toBe(i === 0 ? '0'.repeat(64) : entries[i - 1].hash))
}

async function buildsOf(count: number) {
  const builds = []
  for (let i = 0; i < count; i++) builds.push(await buildTransfer(POST, wallet.address, other, String(1_000_000 + i)))
  return builds
}

test('every event is one chained entry; GetAuditLog verifies the whole log and answers a request\'s entries', async () => {
  const [build] = await buildsOf(1)
  const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })).data
  await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) })
  await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })
  const mine = await auditLog(request.ID)
  expect(mine).toMatchObject({ valid: true, brokenAt: null, reason: null })
  expect(mine.entries.map((entry: any) => [entry.kind, entry.actor, entry.signingRequestId])).toEqual([
    ['created', 'alice', request.ID], ['signed', 'alice', request.ID], ['verified', 'alice', request.ID], ['cancelled', 'alice', request.ID],
  ])
  expect(JSON.parse(mine.entries[0].details)).toEqual({ buildId: build.ID, signerType: 'browser-wallet', txHash: build.txHash, expiresAt: request.expiresAt })
  const all = await auditLog()
  expect(all.valid).toBe(true)
  expectGapFree(all.entries)
  expect(all.entries.slice(-4)).toEqual(mine.entries)
})

test('writes to the audit log through OData answer 405', async () => {
  const [entry] = (await auditLog()).entries
  for (const response of [
    await POST(`${SIGN}/SigningAuditLog`, { sequence: 999_999, kind: 'created', actor: 'mallory', previousHash: '0'.repeat(64), hash: '0'.repeat(64) }),
    await PATCH(`${SIGN}/SigningAuditLog(${entry.sequence})`, { actor: 'mallory' }),
    await DEL(`${SIGN}/SigningAuditLog(${entry.sequence})`),
  ]) {
    expect(response.data.error.code).toBe('ENTITY_IS_READ_ONLY')
    expect(response.status).toBe(405)
  }
  expect((await auditLog()).valid).toBe(true)
})

describe('an entry changed or removed in the database breaks the chain', () => {
  const log = () => cds.entities('chainasign').SigningAuditLog
  let victim: any

  beforeAll(async () => {
    const [build] = await buildsOf(1)
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })).data
    await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })
    victim = (await auditLog(request.ID)).entries[0]
  })

  test.each([
    ['the actor', { actor: 'mallory' }],
    ['the details', { details: '{"buildId":"someone else\'s"}' }],
    ['the time', { occurredAt: '2020-01-01T00:00:00.000Z' }],
  ])('%s of an entry', async (_what, change) => {
    await cds.tx(() => UPDATE(log()).set(change).where({ sequence: victim.sequence }))
    try {
      const broken = await auditLog()
      expect(broken).toMatchObject({ valid: false, brokenAt: victim.sequence, reason: `entry ${victim.sequence} was altered: its content does not match its hash` })
      expect((await auditLog(victim.signingRequestId)).valid).toBe(false)
    } finally {
      await cds.tx(() => UPDATE(log()).set({ actor: victim.actor, details: victim.details, occurredAt: victim.occurredAt }).where({ sequence: victim.sequence }))
    }
    expect((await auditLog()).valid).toBe(true)
  })

  test('an entry removed from the middle, or from the end', async () => {
    const all = (await auditLog()).entries
    for (const removed of [all.find((entry: any) => entry.sequence === victim.sequence), all.at(-1)]) {
      const row = await cds.tx(() => SELECT.one.from(log()).where({ sequence: removed.sequence }))
      await cds.tx(() => DELETE.from(log()).where({ sequence: removed.sequence }))
      try {
        const broken = await auditLog()
        expect(broken).toMatchObject({ valid: false, brokenAt: removed === all.at(-1) ? removed.sequence : removed.sequence + 1 })
      } finally {
        await cds.tx(() => INSERT.into(log()).entries(row))
      }
    }
    expect((await auditLog()).valid).toBe(true)
  })
})

describe('concurrent appends', () => {
  async function createAllAtOnce(urls: string[], count: number) {
    const builds = await buildsOf(count)
    const before = (await auditLog()).entries.length
    const responses = await Promise.all(builds.map((build, i) => fetch(`${urls[i % urls.length]}${SIGN}/CreateSigningRequest`, {
      method: 'POST', headers: { authorization: `Basic ${Buffer.from('alice:').toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ buildId: build.ID }),
    }).then(async response => ({ status: response.status, body: await response.json() }))))
    expect(responses.map(response => response.status)).toEqual(builds.map(() => 200))
    const log = await auditLog()
    expect(log.valid).toBe(true)
    expectGapFree(log.entries)
    const created = log.entries.slice(before)
    expect(created.map((entry: any) => entry.kind)).toEqual(builds.map(() => 'created'))
    expect(new Set(created.map((entry: any) => entry.signingRequestId))).toEqual(new Set(responses.map(response => response.body.ID)))
    for (const response of responses) await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: response.body.ID })
    for (const build of builds) await POST(`${TX}/CancelBuild`, { buildId: build.ID })
  }

  test('20 requests created in parallel keep the log valid and gap-free', async () => {
    await createAllAtOnce([(app as any).url], 20)
  })

  // SQLite serves one process; several processes share a database only on PostgreSQL.
  if (onPostgres) describe('two server processes sharing PostgreSQL', () => {
    let second: RunningServer | undefined

    beforeAll(async () => {
      const root = join(__dirname, '..', '..')
      second = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], {
        cwd: root,
        env: {
          ...process.env, CDS_ENV: 'pg', PORT: '0', CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: devnet.url, CHAIN_A_NETWORK: 'devnet', CDS_TYPESCRIPT: 'true',
          NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
        },
      })
    }, 40_000)
    afterAll(() => second?.stop())

    test('20 requests created in parallel on both keep one valid, gap-free log', async () => {
      await createAllAtOnce([(app as any).url, second!.url], 20)
    })
  })
})
