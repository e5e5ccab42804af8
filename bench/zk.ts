import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { zkConfig } from '../srv/chains/chain-b/config.ts'
import type { ChainBDevnet } from '../devnet/chain-b/index.ts'
import { emptyVaultState, sha256Hex } from '../srv/chains/chain-b/vault.ts'
import { prepareDocument, type PreparedDocument } from '../srv/chains/chain-b/zk/content.ts'
import { proofFieldsParam } from '../srv/chainb-params/documents.ts'
import { CIRCUIT_IDS, ZeroKnowledge, type ProofClaim } from '../srv/chains/chain-b/zk/index.ts'
import {
  documentComparisonClaim, fieldEqualityClaim, fieldMembershipClaim, fieldPredicateClaim, type ClaimContext, type ClaimKind, type PreparedClaim,
} from '../srv/chainb/claims.ts'
import { chainB } from '../srv/chains/chain-b/index.ts'
import { figures, printLine, printRatio, printValue, sample, type Figures } from './measure.ts'

/**
 * Zero-knowledge proofs (issue section 7): prove and verify time per claim kind, a batch of 8 field
 * claims, the proving keys' sizes, prove-to-confirmed through the served app on the devnet, and a
 * read while prover threads are busy against the same read idle. Inputs are real:
 * documents prepared by prepareDocument, claims built by the service's claim builders against a
 * vault state holding the documents' content roots. The reference plugin publishes 25–35 s per
 * attestation (proving in process); its rows show how many times faster ours is.
 */

const REFERENCE_MS = { low: 25_000, high: 35_000 }

const INVOICE = { id: 'INV-1', total: 1234.5, currency: 'EUR', buyer: { country: 'DE', vatId: 'DE123' }, lines: 3 }
const REVISED = { ...INVOICE, total: 999, lines: 4 }
const PROOF_FIELDS = ['total', 'currency', 'buyer.country', 'buyer.vatId', { field: 'lines', scale: 1 }]
const COUNTRIES = JSON.stringify(['AT', 'BE', 'DE', 'FR', 'NL'])
/** Slots 0 (total) and 4 (lines): the fields REVISED changed. */
const REVISED_SLOTS = 0b10001
const ATTESTER = sha256Hex('benchmark attester')

interface Witnessed {
  payloadHash: string
  fields: { field: string; fieldKey: string; value: string; scale: string; salt: string; siblings: string[]; dirs: boolean[] }[]
}

/** Two revisions of the invoice, freshly salted, anchored with their content roots on a vault state. */
interface DocumentPair { invoice: PreparedDocument; revised: PreparedDocument; context: ClaimContext }

function documentPair(): DocumentPair {
  const specs = proofFieldsParam(PROOF_FIELDS)
  const invoice = prepareDocument(INVOICE, specs, randomBytes(32).toString('hex'))
  const revised = prepareDocument(REVISED, specs, randomBytes(32).toString('hex'))
  const anchored = (document: PreparedDocument) => ({
    metadataHash: sha256Hex(''), attester: ATTESTER, height: 1, txHash: sha256Hex(document.payloadHash), contentRoot: document.contentRoot, schemaId: document.schemaId,
  })
  const state = { ...emptyVaultState(), documents: { [invoice.payloadHash]: { [ATTESTER]: anchored(invoice) }, [revised.payloadHash]: { [ATTESTER]: anchored(revised) } } }
  return { invoice, revised, context: { state, attesterId: ATTESTER } }
}

/** A field's witness as a caller passes it: fieldKey, fieldSalt and its path. */
function witness(document: Witnessed, path: string) {
  const field = document.fields.find(candidate => candidate.field === path)
  if (!field) throw new Error(`no prepared field ${path}`)
  return { payloadHash: document.payloadHash, fieldKey: field.fieldKey, fieldSalt: field.salt, siblingsJson: JSON.stringify(field.siblings), dirsJson: JSON.stringify(field.dirs) }
}

const valueOf = (document: Witnessed, path: string) => {
  const { value, scale } = document.fields.find(candidate => candidate.field === path)!
  return { value, scale }
}

const predicate = (path: string, name: string, threshold: string) => ({ invoice, context }: DocumentPair) =>
  fieldPredicateClaim({ ...witness(invoice, path), ...valueOf(invoice, path), predicate: name, threshold }, context)
const equality = (path: string, expectedValue: string) => ({ invoice, context }: DocumentPair) =>
  fieldEqualityClaim({ ...witness(invoice, path), expectedValue }, context)
const membership = (path: string) => ({ invoice, context }: DocumentPair) =>
  fieldMembershipClaim({ ...witness(invoice, path), value: valueOf(invoice, path).value, allowedValuesJson: COUNTRIES }, context)
const comparison = (mode: 'integrity' | 'diff') => ({ invoice, revised, context }: DocumentPair) => documentComparisonClaim(mode, {
  payloadHashA: invoice.payloadHash, payloadHashB: revised.payloadHash, openingAJson: JSON.stringify(invoice.opening), openingBJson: JSON.stringify(revised.opening),
  ...(mode === 'integrity' ? { allowedMask: REVISED_SLOTS } : { k: 2 }),
}, context)

/** One claim of each kind, as the service's operations build them. */
const CLAIMS: Record<ClaimKind, (pair: DocumentPair) => PreparedClaim> = {
  'field-predicate': predicate('total', 'greaterOrEqual', '1000'),
  'field-equality': equality('currency', 'EUR'),
  'field-membership': membership('buyer.country'),
  'document-integrity': comparison('integrity'),
  'document-diff': comparison('diff'),
}
const FIELD_KINDS: ClaimKind[] = ['field-predicate', 'field-equality', 'field-membership']

/** Eight different field claims about one document, as issueFieldPredicateAttestationBatch takes them. */
const BATCH_OF_8 = [
  predicate('total', 'greaterOrEqual', '1000'), predicate('total', 'lessOrEqual', '2000'), predicate('total', 'greaterThan', '1'), predicate('lines', 'lessThan', '10'),
  equality('currency', 'EUR'), equality('buyer.country', 'DE'), equality('buyer.vatId', 'DE123'), membership('buyer.country'),
]

/** A summary row: the figure, its target, and how many times faster than the reference's 25–35 s. */
interface Row { figure: string; measured: string; target: string; verdict: string; reference: string }

const duration = (ms: number) => (ms < 1000 ? `${ms.toFixed(ms < 100 ? 1 : 0)} ms` : `${(ms / 1000).toFixed(2)} s`)
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`
const timesFaster = (ms: number) => `${(REFERENCE_MS.low / ms).toFixed(0)}–${(REFERENCE_MS.high / ms).toFixed(0)}x faster`

function timedRow(figure: string, measured: Figures, targetMs?: number, reference = false): Row {
  return {
    figure, measured: duration(measured.p50), target: targetMs === undefined ? '' : `≤ ${duration(targetMs)}`,
    verdict: targetMs === undefined ? '' : measured.p50 <= targetMs ? 'met' : 'not met', reference: reference ? timesFaster(measured.p50) : '',
  }
}

export async function zkBenchmarks({ url, devnet, rounds }: { url: string; devnet: ChainBDevnet; rounds: number }) {
  const proofs = Math.max(3, Math.min(20, Math.round(rounds / 100)))
  const config = zkConfig()
  console.log(`\nzero-knowledge proofs (Groth16 over BN254, ${config.provers} prover threads, p50 of ${proofs} proofs per figure, load average ${loadAverage()})`)
  const rows: Row[] = []
  const zk = new ZeroKnowledge(config.keysDir, config.provers)
  try {
    rows.push(...await provingBenchmarks(zk, proofs))
    rows.push(...keySizes(zk))
  } finally {
    await zk.close()
  }
  const app = servedApp(url, devnet)
  rows.push(...await proveToConfirmed(app, devnet, Math.min(proofs, 5)))
  rows.push(...await readsWhileProving(app, Math.min(rounds, 1000)))
  printSummary(rows)
  console.log(`load average at the end ${loadAverage()} (other work on the machine competes with the prover threads)`)
}

const loadAverage = () => loadavg().map(load => load.toFixed(2)).join(' ')

/** Prove and verify per claim kind, and a batch of 8 field claims, through a prover pool of its own. */
async function provingBenchmarks(zk: ZeroKnowledge, proofs: number): Promise<Row[]> {
  const rows: Row[] = []
  const first = performance.now()
  await proven(zk, CLAIMS['field-predicate'](documentPair()))
  printValue('first field predicate proof on a new thread (loads snarkjs and the keys)', duration(performance.now() - first))
  for (const kind of Object.keys(CLAIMS) as ClaimKind[]) await Promise.all(Array.from({ length: zk.prover.size }, () => proven(zk, CLAIMS[kind](documentPair()))))

  for (const kind of Object.keys(CLAIMS) as ClaimKind[]) {
    const made: ProofClaim[] = []
    const times: number[] = []
    for (let i = 0; i < proofs; i++) {
      const claim = CLAIMS[kind](documentPair())
      const started = performance.now()
      made.push(await proven(zk, claim))
      times.push(performance.now() - started)
    }
    const prove = figures(times)
    printLine(`prove ${kind} (${made[0].circuit})`, prove)
    // The first verification builds the main thread's curve: not a figure.
    await zk.verify(made[0])
    let next = 0
    const verify = await sample(proofs * 5, async () => {
      if (!(await zk.verify(made[next++ % made.length]))) throw new Error(`a ${kind} proof did not verify`)
    })
    printLine(`verify ${kind} (main thread)`, verify)
    rows.push(timedRow(`prove ${kind}`, prove, FIELD_KINDS.includes(kind) ? 1000 : 5000, true), timedRow(`verify ${kind}`, verify, 50))
  }

  const batch = await sample(proofs, () => {
    const pair = documentPair()
    return Promise.all(BATCH_OF_8.map(make => make(pair)).map(claim => proven(zk, claim)))
  })
  printLine(`batch of 8 field claims proved at once (${zk.prover.size} threads)`, batch)
  rows.push(timedRow('batch of 8 field claims, proved at once', batch, 5000, true))
  return rows
}

/** A claim proved through the pool; its public signals must be the statement the claim builder made. */
async function proven(zk: ZeroKnowledge, claim: PreparedClaim): Promise<ProofClaim> {
  const { proof, publicSignals } = await zk.prove(claim.circuit, claim.input)
  if (publicSignals.join() !== claim.publicSignals.join()) throw new Error(`the ${claim.kind} proof has other public signals than its claim`)
  return { circuit: claim.circuit, proof, publicSignals }
}

function keySizes(zk: ZeroKnowledge): Row[] {
  return CIRCUIT_IDS.map(id => {
    const { constraints, files } = zk.manifest.circuits[id]
    const sizes = `zkey ${megabytes(files.zkey.size)}, wasm ${megabytes(files.wasm.size)}, ${constraints} constraints`
    printValue(`proving key ${id}`, sizes)
    return { figure: `proving key ${id}`, measured: sizes, target: '', verdict: '', reference: '' }
  })
}

type ServedApp = ReturnType<typeof servedApp>

/** The application the bench serves in-process, called over HTTP as alice; `untilConfirmed` follows a job. */
function servedApp(url: string, devnet: ChainBDevnet) {
  const headers = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64'), 'content-type': 'application/json' }
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
    return response.json()
  }
  /** With `produce`, a block whenever the job waits for one (blocks on demand); else the clock makes them. */
  const untilConfirmed = async (jobId: string, produce: boolean) => {
    for (;;) {
      const { status, errorCode, errorMessage } = await call('POST', '/odata/v4/chainb/getJobStatus', { jobId })
      if (status === 'confirmed') return
      if (status === 'failed') throw new Error(`job ${jobId} failed: ${errorCode} ${errorMessage}`)
      if (produce && status === 'submitted') devnet.produceBlock()
      await new Promise(resolve => setTimeout(resolve, produce ? 5 : 20))
    }
  }
  return { call, untilConfirmed }
}

async function anchoredInvoice(app: ServedApp): Promise<Witnessed> {
  const content = { documentJson: JSON.stringify({ ...INVOICE, id: `INV-${randomBytes(6).toString('hex')}` }), proofFieldsJson: JSON.stringify(PROOF_FIELDS) }
  const prepared = await app.call('POST', '/odata/v4/chainb/prepareDocumentProof', content)
  const { jobId } = await app.call('POST', '/odata/v4/chainb/anchorDocument', { sha256: prepared.payloadHash, ...content, saltSeed: prepared.opening.saltSeed })
  await app.untilConfirmed(jobId, true)
  return prepared
}

/**
 * issueFieldPredicateAttestation to its job confirmed (proved in the service's threads, verified,
 * submitted, in a block, final at depth 1), each on an invoice anchored beforehand: with blocks on
 * demand, and with a block every second. The job runner looks for work every CHAIN_B_JOBS_POLL_MS.
 */
async function proveToConfirmed(app: ServedApp, devnet: ChainBDevnet, count: number): Promise<Row[]> {
  const attest = async (invoice: Witnessed, produce: boolean) => {
    const { jobId } = await app.call('POST', '/odata/v4/chainb/issueFieldPredicateAttestation', {
      ...witness(invoice, 'total'), ...valueOf(invoice, 'total'), predicate: 'greaterOrEqual', threshold: '1000',
    })
    await app.untilConfirmed(jobId, produce)
  }
  const invoices: Witnessed[] = []
  for (let i = 0; i < count * 2; i++) invoices.push(await anchoredInvoice(app))
  const onDemand = await sample(count, () => attest(invoices.pop()!, true))
  printLine('field predicate, request to confirmed, blocks on demand', onDemand)
  const clock = setInterval(() => devnet.produceBlock(), 1000)
  let onClock: Figures
  try {
    onClock = await sample(count, () => attest(invoices.pop()!, false))
  } finally {
    clearInterval(clock)
  }
  printLine('field predicate, request to confirmed, a block every 1 s', onClock)
  return [
    timedRow(`field predicate, request to confirmed, blocks on demand (p50 of ${count})`, onDemand, undefined, true),
    timedRow(`field predicate, request to confirmed, a block every 1 s (p50 of ${count})`, onClock, undefined, true),
  ]
}

/** Enough document_compare proofs to keep every thread of a pool busy for about 20 s. */
const BUSY_PROOFS_PER_THREAD = 5

/**
 * A cheap read (a document by key) while a prover pool works through document_compare proofs,
 * against the same read idle just before and just after (so drift, such as other work on the
 * machine, weighs on both): the service's own pool (one thread per core by default), and a pool
 * that leaves one core to the event loop. Proving runs off the event loop; what remains is the
 * competition for cores.
 */
async function readsWhileProving(app: ServedApp, idleReads: number): Promise<Row[]> {
  const [{ ID: documentId }] = (await app.call('GET', '/odata/v4/chainb/Documents?$top=1&$select=ID')).value
  const read = () => app.call('GET', `/odata/v4/chainb/Documents(${documentId})`)
  await readTimes(idleReads, read)
  const { zk: service } = await chainB()
  const rows = await busyReads(read, idleReads, service, `the service's ${service.prover.size} prover threads`)
  const spare = new ZeroKnowledge(service.keysDir, Math.max(1, service.prover.size - 1))
  try {
    rows.push(...await busyReads(read, idleReads, spare, `${spare.prover.size} prover thread${spare.prover.size === 1 ? '' : 's'} (one core left free)`))
  } finally {
    await spare.close()
  }
  return rows
}

async function readTimes(count: number, read: () => Promise<unknown>, until?: () => boolean): Promise<number[]> {
  const times: number[] = []
  while (until ? until() : times.length < count) {
    const started = performance.now()
    await read()
    times.push(performance.now() - started)
  }
  return times
}

async function busyReads(read: () => Promise<unknown>, idleReads: number, zk: ZeroKnowledge, pool: string): Promise<Row[]> {
  const claims = Array.from({ length: BUSY_PROOFS_PER_THREAD * zk.prover.size }, () => CLAIMS['document-integrity'](documentPair()))
  const before = await readTimes(idleReads, read)
  let proving = true
  const proofs = Promise.all(claims.map(claim => proven(zk, claim))).finally(() => (proving = false))
  const during = await readTimes(0, read, () => proving)
  await proofs
  const after = await readTimes(idleReads, read)
  const idle = figures([...before, ...after])
  const busy = figures(during)
  printLine('Documents(<id>), idle just before and after', idle)
  printLine(`same read while ${pool} prove ${claims.length} document_compare (${during.length} reads)`, busy)
  printRatio('while proving / idle (target p50 ≤ 1.2)', busy, idle)
  const ratio = busy.p50 / idle.p50
  return [
    { figure: `read p50 idle / while ${pool} prove`, measured: `${duration(idle.p50)} / ${duration(busy.p50)}`, target: '', verdict: '', reference: '' },
    { figure: `read while ${pool} prove / idle`, measured: `${ratio.toFixed(2)}x`, target: '≤ 1.2x', verdict: ratio <= 1.2 ? 'met' : 'not met', reference: '' },
  ]
}

function printSummary(rows: Row[]) {
  console.log(`\n| zero-knowledge figure | measured (p50) | target | | vs reference plugin (${REFERENCE_MS.low / 1000}–${REFERENCE_MS.high / 1000} s per attestation) |`)
  console.log('|---|---|---|---|---|')
  for (const row of rows) console.log(`| ${row.figure} | ${row.measured} | ${row.target} | ${row.verdict} | ${row.reference} |`)
}
