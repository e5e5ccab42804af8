import { randomBytes } from 'node:crypto'
import type { ChainBDevnet } from '../devnet/chain-b/index.ts'
import { printLine, printRatio, printValue, sample } from './measure.ts'

/**
 * Chain B on its devnet (in-process server, test profile: SQLite in memory, finality depth 1):
 * how fast a write is accepted as a job, how long an anchor takes to be confirmed (blocks on
 * demand, and on a 1 s block clock), reads of blocks and documents, jobs per second through the
 * runner, and the same read under both spellings (the ratio should be 1.0 within noise).
 */
export async function chainBBenchmarks({ url, devnet, rounds }: { url: string; devnet: ChainBDevnet; rounds: number }) {
  // The samples queue hundreds of one caller's anchors before a block comes: far beyond the bound
  // on one caller's open jobs (CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER, read at each write).
  process.env.CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER ??= String(10 * rounds)
  const headers = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64'), 'content-type': 'application/json' }
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
    return response.json()
  }
  const anchor = () => call('POST', '/odata/v4/chainb/anchorDocument', { sha256: randomBytes(32).toString('hex'), contentType: 'application/pdf' })
  const statusOf = async (jobId: string) => (await call('POST', '/odata/v4/chainb/getJobStatus', { jobId })).status as string
  const untilConfirmed = async (jobId: string, produce: boolean) => {
    for (;;) {
      const status = await statusOf(jobId)
      if (status === 'confirmed') return
      if (status === 'failed') throw new Error(`job ${jobId} failed`)
      if (produce) devnet.produceBlock()
      await new Promise(resolve => setTimeout(resolve, produce ? 5 : 20))
    }
  }

  console.log('\nchain B (SQLite in memory, devnet upstream, finality depth 1)')
  const accept = await sample(Math.min(rounds, 500), anchor)
  printLine('anchorDocument accepted as a job (target p50 ≤ 20 ms)', accept)
  await drain(devnet, call)

  const onDemand = await sample(Math.min(rounds, 50), async () => untilConfirmed((await anchor()).jobId, true))
  printLine('anchor request to confirmed, blocks on demand', onDemand)

  const clock = setInterval(() => devnet.produceBlock(), 1000)
  try {
    const onClock = await sample(Math.min(rounds, 10), async () => untilConfirmed((await anchor()).jobId, false))
    printLine('anchor request to confirmed, a block every 1 s', onClock)
  } finally {
    clearInterval(clock)
  }

  const batch = Math.min(rounds, 200)
  const started = performance.now()
  const jobs = await Promise.all(Array.from({ length: batch }, anchor))
  for (const { jobId } of jobs) await untilConfirmed(jobId, true)
  const seconds = (performance.now() - started) / 1000
  printValue(`jobs through the runner, ${batch} anchors accepted to confirmed`, `${(batch / seconds).toFixed(0)} jobs/s`)

  const [{ ID: documentId }] = (await call('GET', '/odata/v4/chainb/Documents?$top=1&$select=ID')).value
  const blocks = await sample(rounds, () => call('GET', '/odata/v4/chainb/Blocks?$orderby=height%20desc&$top=10'))
  printLine('Blocks, the latest 10 (target p50 ≤ 5 ms)', blocks)
  const document = await sample(rounds, () => call('GET', `/odata/v4/chainb/Documents(${documentId})`))
  printLine('Documents(<id>)', document)
  const plugin = await sample(rounds, () => call('GET', `/api/v1/chainb/Documents(${documentId})`))
  printLine('the same under /api/v1/chainb', plugin)
  printRatio('/api/v1/chainb / /odata/v4/chainb (1.0 within noise)', plugin, document)
}

/** Lets the jobs of a latency sample finish before the next figure, so they do not skew it. */
async function drain(devnet: ChainBDevnet, call: (method: 'GET', path: string) => Promise<{ '@odata.count': number }>) {
  const open = "status%20ne%20'confirmed'%20and%20status%20ne%20'failed'"
  for (let i = 0; i < 2000; i++) {
    const { '@odata.count': count } = await call('GET', `/odata/v4/chainb/Jobs?$count=true&$top=0&$filter=${open}`)
    if (count === 0) return
    devnet.produceBlock()
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  throw new Error('the jobs of the sample did not finish')
}

/**
 * The chain-B devnet's submission of a sponsored call (signatures, the sponsor's DUST against its
 * pending fees, the mempool kept on disk when the chain is), with the mempool empty (the baseline:
 * the first calls of a fresh ledger) and with thousands of the same sponsor's calls pending (a burst
 * before a block comes); in memory, and with the chain kept in a state folder as `npm start` keeps it.
 */
export async function devnetSubmissionBenchmarks({ pending = 2000, rounds = 200 } = {}) {
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { openChain } = await import('../devnet/chain-b/state.ts')
  const { callDigest, sha256Hex, signDigest, vaultKeyFromSeed } = await import('../srv/chains/chain-b/vault.ts')
  console.log(`\nthe chain-B devnet's submission of a sponsored call, against an empty mempool`)
  const keyOf = (name: string) => vaultKeyFromSeed(Buffer.from(sha256Hex(name), 'hex'))
  const sponsor = keyOf('sponsor')
  const attester = keyOf('attester')
  for (const kept of [false, true]) {
    const stateDir = kept ? mkdtempSync(join(tmpdir(), 'bench-chain-b-')) : undefined
    const { ledger, close } = await openChain({ seed: 'bench', epochLength: 60 }, stateDir)
    ledger.grantDust(sponsor.publicKey, 10n ** 22n)
    ledger.produceBlock()
    let next = 0
    const submit = async () => {
      const n = next++
      const call = { circuit: 'attest', args: { payloadHash: sha256Hex(`document ${n}`), metadataHash: sha256Hex('metadata') } }
      const nonce = `bench-nonce-${n}`
      const digest = callDigest(ledger.vaultAddress, call, nonce)
      ledger.submitCall({ contractAddress: ledger.vaultAddress, call, nonce, attesterKey: attester.publicKey, signature: signDigest(attester, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) })
    }
    const where = kept ? 'chain on disk' : 'in memory'
    const empty = await sample(rounds, submit)
    while (ledger.mempool.length < pending) await submit()
    const busy = await sample(rounds, submit)
    close()
    if (stateDir) rmSync(stateDir, { recursive: true, force: true })
    printLine(`submit, ${where}, mempool empty (baseline)`, empty)
    printLine(`submit, ${where}, ${pending} of the sponsor's calls pending`, busy)
    printRatio(`${where}: ${pending} pending against empty (1.0: no walk)`, busy, empty)
  }
}
