import cds from '@sap/cds'
import { BucketWriterState_, EpochSnapshots, MetricBuckets } from '#cds-models/analytics'
import * as chaina from '#cds-models/chaina'
import * as chainb from '#cds-models/chainb'
import { foldChain } from '../srv/analytics/bucket-writer.ts'
import { chainASource } from '../srv/analytics/chain-a-source.ts'
import { chainBSource } from '../srv/analytics/chain-b-source.ts'
import type { ChainSource } from '../srv/analytics/sources.ts'
import { WINDOW_NAMES } from '../srv/analytics/windows.ts'
import { ChainAFollower } from '../srv/chaina-odata/follower.ts'
import { chainAIndex } from '../srv/chaina-odata/service.ts'
import { Follower } from '../srv/chainb-indexer/follower.ts'
import { chainA } from '../srv/chains/chain-a/index.ts'
import { embeddedDevnet as embeddedChainA } from '../devnet/chain-a/embedded.ts'
import { chainB } from '../srv/chains/chain-b/index.ts'
import { embeddedDevnet as embeddedChainB } from '../devnet/chain-b/embedded.ts'
import { figures, printValue, type Figures } from './measure.ts'

const { SELECT, INSERT, UPSERT, DELETE } = cds.ql

/**
 * Analytics (issue 11, part 4). First the followers' lag behind the embedded devnets at a 1 s block
 * time. Then, with the followers stopped and the chain indexes emptied, 30 days of synthetic history
 * (BENCH_ANALYTICS_DAYS) written into both chains' index tables and folded by the bucket writer the
 * way it folds while a follower catches up (6 hours at a time), a rebuild of everything in one fold,
 * and the fold of one more minute. Then each analytics read through HTTP, against the service
 * document as baseline and the 20 ms p50 target, with the queries the time of the slower ones goes
 * to. It empties the chain indexes, so it runs after the other in-process groups.
 */
export async function analyticsBenchmarks({ url, rounds }: { url: string; rounds: number }) {
  const days = Number(process.env.BENCH_ANALYTICS_DAYS ?? 30)
  if (!(days > 0)) throw new Error(`BENCH_ANALYTICS_DAYS must be a number of days above 0, got '${process.env.BENCH_ANALYTICS_DAYS}'`)
  ;(cds as any).log('chaina-follower', 'warn')
  ;(cds as any).log('chainb-indexer', 'warn')
  console.log(`\nanalytics (${cds.env.requires.db.kind}; a block every ${CHAIN_A.blockSeconds} s on chain A, every ${CHAIN_B.blockSeconds} s on chain B)`)
  await followerLag(LAG_SECONDS)
  await resetIndexes()
  const end = Date.now() - 60_000
  const histories = [new History(CHAIN_A, end - days * DAY), new History(CHAIN_B, end - days * DAY)]
  await foldHistory(histories, days, end)
  await foldOneMinute(histories, end + 60_000)
  await reads(url, rounds)
}

const SECOND = 1000
const HOUR = 3_600_000
const DAY = 24 * HOUR
/** What the writer folds at once while a follower catches up: the history is written and folded in steps this long. */
const STEP_MS = 6 * HOUR
const LAG_SECONDS = 15
const TARGET_MS = 20
/** Each read is sampled `rounds` times, or for this long once MIN_SAMPLES were taken. */
const READ_BUDGET_MS = 3000
const MIN_SAMPLES = 10

// ---------------------------------------------------------------------------------------------
// Follower lag

interface Stoppable { stop(): Promise<void> }

interface FollowedChain {
  label: string
  follower: Stoppable
  tipHeight(): number
  produce(): void
  indexedHeight(): Promise<number | null>
}

const indexedHeight = async (entity: typeof chaina.SyncState | typeof chainb.SyncState, ID: string) => {
  const row = await SELECT.one.from(entity).columns('indexedHeight').where({ ID }) as { indexedHeight?: number | null } | undefined
  return row?.indexedHeight ?? null
}

/**
 * The chains with an embedded devnet, each with its follower: the one the server runs, or else
 * (the test profile runs no chain-A follower) one started here the way the service starts it.
 */
async function followedChains(): Promise<FollowedChain[]> {
  const serverFollower = (service: string) => (cds.services[service] as unknown as { follower?: Stoppable } | undefined)?.follower
  const whose = (running: Stoppable | undefined) => (running ? 'the server\'s' : 'started here')
  const chains: FollowedChain[] = []
  const devnetA = embeddedChainA()
  if (devnetA) {
    const running = serverFollower('ChainAReadService')
    chains.push({
      label: `chain-A follower (${whose(running)}; polls the tip)`,
      follower: running ?? new ChainAFollower({ chain: await chainA(), index: chainAIndex() }).start(),
      tipHeight: () => devnetA.ledger.tip.height,
      produce: () => { devnetA.activity.round(); devnetA.produceBlock() },
      indexedHeight: () => indexedHeight(chaina.SyncState, 'chain-a'),
    })
  }
  const devnetB = embeddedChainB()
  if (devnetB) {
    const running = serverFollower('ChainBIndexerService')
    const { port, settings } = await chainB()
    chains.push({
      label: `chain-B follower (${whose(running)}; woken by its subscription)`,
      follower: running ?? new Follower({ port, finalityDepth: settings.finalityDepth, network: settings.network }).start(),
      tipHeight: () => devnetB.ledger.tip.height,
      produce: () => { devnetB.activity.round(); devnetB.produceBlock() },
      indexedHeight: () => indexedHeight(chainb.SyncState, 'chain-b'),
    })
  }
  return chains
}

/**
 * The followers against the embedded devnets with a block (and a transaction) every second: the
 * lag in blocks (devnet tip - indexed height) sampled every 50 ms, and how long each block took
 * from produced to indexed (to within the 50 ms of sampling). Then every follower is stopped: they
 * would index the devnets into the tables the synthetic history goes into.
 */
async function followerLag(seconds: number) {
  console.log(`\n  follower lag on the embedded devnets at a 1 s block time (${seconds} s, sampled every 50 ms; target: within 2 blocks)`)
  const chains = await followedChains()
  if (!chains.length) return printValue('no embedded devnet', 'nothing to follow')
  try {
    await Promise.all(chains.map(chain => untilIndexed(chain, 30_000)))
    const produced = chains.map(() => new Map<number, number>())
    const seen = chains.map(chain => chain.tipHeight())
    const lags: number[][] = chains.map(() => [])
    const delays: number[][] = chains.map(() => [])
    const clock = setInterval(() => chains.forEach((chain, i) => {
      try {
        chain.produce()
        produced[i].set(chain.tipHeight(), performance.now())
      } catch (error) {
        console.error(`  ${chain.label}: the devnet made no block:`, (error as Error).message)
      }
    }), SECOND)
    const until = performance.now() + seconds * SECOND
    try {
      while (performance.now() < until) {
        await Promise.all(chains.map(async (chain, i) => {
          const indexed = (await chain.indexedHeight()) ?? -1
          const now = performance.now()
          lags[i].push(Math.max(0, chain.tipHeight() - indexed))
          for (; seen[i] < indexed; seen[i]++) {
            const at = produced[i].get(seen[i] + 1)
            if (at !== undefined) delays[i].push(now - at)
          }
        }))
        await pause(50)
      }
    } finally {
      clearInterval(clock)
    }
    chains.forEach((chain, i) => {
      if (!delays[i].length) return printValue(chain.label, `indexed none of the ${produced[i].size} blocks produced`)
      const lag = figures(lags[i]), delay = figures(delays[i])
      const max = Math.max(...lags[i])
      printValue(chain.label, `lag p50 ${lag.p50} blocks, max ${max} (${max <= 2 ? 'target met' : 'TARGET MISSED'})`)
      printValue('', `produced to indexed p50 ${delay.p50.toFixed(0)} ms, max ${Math.max(...delays[i]).toFixed(0)} ms (${delays[i].length} of ${produced[i].size} blocks)`)
    })
  } finally {
    for (const chain of chains) await chain.follower.stop()
  }
}

async function untilIndexed(chain: FollowedChain, ms: number) {
  const until = performance.now() + ms
  while (performance.now() < until && ((await chain.indexedHeight()) ?? -1) < chain.tipHeight()) await pause(50)
}

/** Empties both chains' indexes and the buckets; chain A's pools come back with their active stake. */
async function resetIndexes() {
  const entities = [
    chaina.Blocks, chaina.Transactions, chaina.TransactionInputs, chaina.TransactionOutputs, chaina.TransactionInputAssets, chaina.TransactionOutputAssets,
    chaina.TransactionMetadata_, chaina.Pools, chaina.SyncState_, chaina.ReorgLog_,
    chainb.Blocks, chainb.Transactions, chainb.TransactionSegments, chainb.ContractActions, chainb.UnshieldedUtxos, chainb.SyncState_, chainb.ReorgLog_,
    MetricBuckets, EpochSnapshots, BucketWriterState_,
  ]
  for (const entity of entities) await DELETE.from(entity)
  await INSERT.into(chaina.Pools).entries(POOLS.map((poolId, i) => ({ poolId, activeStake: String(Math.round(60e12 / (i + 1))) })))
}

// ---------------------------------------------------------------------------------------------
// Synthetic history

type Row = Record<string, string | number | boolean | null>
type Rows = Row[]
type Tables = [entity: unknown, rows: Rows][]

/** A seeded generator (mulberry32), so every run writes the same history. */
function seeded(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const hex = (prefix: string, n: number, length = 64) => prefix + n.toString(16).padStart(length - prefix.length, '0')
const iso = (at: number) => new Date(at).toISOString()
const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

interface ChainShape {
  label: string
  source: ChainSource
  blockSeconds: number
  firstHeight: number
  /** Blocks below the tip after which a block is final (chain A: preprod's security parameter). */
  finalityDepth: number
  /** The rows of one block at a height and time, with the transactions numbered from `tx`. */
  block(random: () => number, height: number, at: number, tx: number, parent: string | null): { hash: string; transactions: number; tables: Tables }
  /** The follower's SyncState row at a position. */
  sync(last: { height: number; hash: string; at: number }, finalizedHeight: number): [entity: unknown, row: Row]
}

/** A pick from `count` entities where the first are the most frequent (a rough Zipf law). */
const skewed = (random: () => number, count: number) => Math.min(count - 1, Math.floor(count * random() ** 2))

const POOLS = Array.from({ length: 30 }, (_, i) => `pool1bench${String(i).padStart(46, '0')}`)
const ADDRESSES = Array.from({ length: 40 }, (_, i) => `addr_test1bench${String(i).padStart(48, '0')}`)
const ASSETS = Array.from({ length: 8 }, (_, i) => ({ policyId: hex('b', i, 56), assetNameHex: Buffer.from(`TOKEN${i}`).toString('hex') }))
const AUTHORS = Array.from({ length: 3 }, (_, i) => hex('au', i))
const CONTRACTS = Array.from({ length: 5 }, (_, i) => hex('c0', i))
const OWNERS = Array.from({ length: 20 }, (_, i) => hex('0e', i))
/** Cardano's epochs last 5 days; the chain-B devnet's an hour. */
const EPOCH_A_MS = 5 * DAY
const EPOCH_B_MS = HOUR

/** Chain A: 2-5 transactions a block, each with 1-2 inputs and 2-3 outputs to a few dozen addresses; some carry native assets. */
const CHAIN_A: ChainShape = {
  label: 'chain A', source: chainASource, blockSeconds: 20, firstHeight: 4_000_000, finalityDepth: 2160,
  block(random, height, at, tx, parent) {
    const hash = hex('a0', height)
    const transactions: Rows = [], inputs: Rows = [], outputs: Rows = [], assets: Rows = []
    const count = 2 + Math.floor(random() * 4)
    let fees = 0, output = 0
    for (let i = 0; i < count; i++) {
      const txHash = hex('a1', tx + i)
      const fee = 160_000 + Math.floor(random() * 240_000)
      const paid = 2 + Math.floor(random() * 2)
      for (let o = 0; o < paid; o++) {
        const lovelace = 1_000_000 + Math.floor(random() * 1e9)
        output += lovelace
        outputs.push({ txHash, outputIndex: o, address: ADDRESSES[skewed(random, ADDRESSES.length)], lovelace: String(lovelace), isCollateral: false })
      }
      const spent = 1 + Math.floor(random() * 2)
      for (let n = 0; n < spent; n++) {
        inputs.push({ txHash, inputIndex: n, address: ADDRESSES[skewed(random, ADDRESSES.length)], spentTxHash: hex('a1', Math.max(0, tx - 1 - Math.floor(random() * 500))), spentOutputIndex: 0, lovelace: '5000000', isCollateral: false, isReference: false })
      }
      const asset = random() < 0.15 ? ASSETS[skewed(random, ASSETS.length)] : undefined
      if (asset) assets.push({ txHash, outputIndex: 0, unit: asset.policyId + asset.assetNameHex, ...asset, quantity: String(1 + Math.floor(random() * 1000)) })
      fees += fee
      transactions.push({
        hash: txHash, blockHash: hash, blockHeight: height, blockTime: iso(at), slot: Math.floor(at / 1000), txIndex: i, fee: String(fee), deposit: '0',
        size: 300 + Math.floor(random() * 15_000), validContract: random() >= 0.01, inputCount: spent, outputCount: paid,
        assetMintOrBurnCount: asset && random() < 0.1 ? 1 : 0, withdrawalCount: 0, delegationCount: 0, stakeCertCount: 0,
        redeemerCount: random() < 0.1 ? 1 : 0, hasMetadata: false,
      })
    }
    const epoch = Math.floor(at / EPOCH_A_MS)
    const block = {
      hash, height, slot: Math.floor(at / 1000), epoch, epochSlot: Math.floor((at % EPOCH_A_MS) / 1000), time: iso(at),
      slotLeader: POOLS[skewed(random, POOLS.length)], size: 20_000, txCount: count, output: String(output), fees: String(fees), previousBlock: parent,
    }
    const tables: Tables = [[chaina.Blocks, [block]], [chaina.Transactions, transactions], [chaina.TransactionOutputs, outputs], [chaina.TransactionInputs, inputs], [chaina.TransactionOutputAssets, assets]]
    return { hash, transactions: count, tables }
  },
  sync(last, finalizedHeight) {
    return [chaina.SyncState, {
      ID: 'chain-a', network: 'devnet', startHeight: CHAIN_A.firstHeight, chainHeight: last.height, chainTipAt: iso(last.at), indexedHeight: last.height, indexedHash: last.hash,
      indexedAt: iso(Date.now()), indexedBlockAt: iso(last.at), finalizedHeight, status: 'synced',
    }]
  },
}

/** Chain B: 3 authors in turn, 0-2 transactions a block (a tenth of them system ones); a third of the regular ones call one of 5 contracts. */
const CHAIN_B: ChainShape = {
  label: 'chain B', source: chainBSource, blockSeconds: 6, firstHeight: 1_000_000, finalityDepth: 3,
  block(random, height, at, tx, parent) {
    const hash = hex('b0', height)
    const transactions: Rows = [], actions: Rows = [], utxos: Rows = []
    const roll = random()
    const count = roll < 0.3 ? 0 : roll < 0.75 ? 1 : 2
    for (let i = 0; i < count; i++) {
      const txHash = hex('b1', tx + i)
      const regular = random() >= 0.1
      const statusRoll = random()
      const shielded = regular && random() < 0.4
      transactions.push({
        hash: txHash, block_hash: hash, blockHeight: height, transactionId: tx + i, transactionType: regular ? 'regular' : 'system', protocolVersion: 1,
        status: regular ? (statusRoll < 0.95 ? 'SUCCESS' : statusRoll < 0.98 ? 'FAILURE' : 'PARTIAL_SUCCESS') : null,
        paidFees: regular ? String(1_000_000_000_000 + Math.floor(random() * 4e12)) : null, isShielded: shielded,
      })
      if (regular && random() < 0.33) {
        actions.push({ transaction_hash: txHash, position: 0, address: CONTRACTS[skewed(random, CONTRACTS.length)], actionType: random() < 0.02 ? 'ContractDeploy' : 'ContractCall', entryPoint: 'attest', blockHeight: height })
      }
      if (regular && !shielded) {
        utxos.push({ intentHash: txHash, outputIndex: 0, owner: OWNERS[skewed(random, OWNERS.length)], tokenType: hex('', 0), value: String(1 + Math.floor(random() * 1e9)), createdAtTransaction_hash: txHash })
      }
    }
    const block = {
      hash, height, protocolVersion: 1, timestamp: iso(at), author: AUTHORS[height % AUTHORS.length], parentHash: parent,
      epoch: Math.floor(at / EPOCH_B_MS), txCount: count, finalized: false,
    }
    return { hash, transactions: count, tables: [[chainb.Blocks, [block]], [chainb.Transactions, transactions], [chainb.ContractActions, actions], [chainb.UnshieldedUtxos, utxos]] }
  },
  sync(last, finalizedHeight) {
    return [chainb.SyncState, {
      ID: 'chain-b', network: 'devnet', chainHeight: last.height, chainTipAt: iso(last.at), indexedHeight: last.height, indexedHash: last.hash,
      indexedAt: iso(Date.now()), indexedBlockAt: iso(last.at), finalizedHeight, status: 'synced', paused: false,
    }]
  },
}

/** One chain's synthetic history, written span by span as a follower would index it. */
class History {
  readonly shape: ChainShape
  readonly start: number
  private readonly random = seeded(11)
  private nextAt: number
  private height: number
  private tx = 0
  private last: { height: number; hash: string; at: number } | undefined
  blocks = 0
  transactions = 0
  rows = 0
  writeMs = 0
  foldMs = 0

  constructor(shape: ChainShape, start: number) {
    this.shape = shape
    this.start = start
    this.nextAt = start
    this.height = shape.firstHeight
  }

  /** Writes the blocks with their time in [nextAt, to) and moves the follower's position to the last; answers how many blocks. */
  async writeUntil(to: number): Promise<number> {
    const started = performance.now()
    const tables = new Map<unknown, Rows>()
    let written = 0
    for (; this.nextAt < to; this.nextAt += this.shape.blockSeconds * SECOND, written++) {
      const block = this.shape.block(this.random, this.height, this.nextAt, this.tx, this.last?.hash ?? null)
      for (const [entity, rows] of block.tables) {
        const all = tables.get(entity) ?? []
        tables.set(entity, all)
        all.push(...rows)
      }
      this.last = { height: this.height, hash: block.hash, at: this.nextAt }
      this.height++
      this.tx += block.transactions
      this.transactions += block.transactions
    }
    if (!this.last) return 0
    for (const [entity, rows] of tables) {
      if (!rows.length) continue
      // Column lists with rows of values: about twice as fast as entries.
      const columns = Object.keys(rows[0])
      for (let at = 0; at < rows.length; at += 5000) await INSERT.into(entity as any).columns(columns).rows(rows.slice(at, at + 5000).map(row => columns.map(column => row[column])))
      this.rows += rows.length
    }
    const [syncState, position] = this.shape.sync(this.last, Math.max(this.shape.firstHeight - 1, this.last.height - this.shape.finalityDepth))
    await UPSERT.into(syncState as any).entries(position)
    this.blocks += written
    this.writeMs += performance.now() - started
    return written
  }

  async fold(options: { from?: number } = {}) {
    const started = performance.now()
    const outcome = await foldChain(this.shape.source, Date.now(), options)
    const ms = performance.now() - started
    this.foldMs += ms
    return { ...outcome, ms }
  }
}

const perSecond = (count: number, ms: number) => `${Math.round(count / (ms / 1000)).toLocaleString('en')} blocks/s`
const thousands = (count: number) => count.toLocaleString('en')

/** The whole history, written and folded in steps; then one rebuild of everything in a single fold. */
async function foldHistory(histories: History[], days: number, end: number) {
  console.log(`\n  ${days} day${days === 1 ? '' : 's'} of synthetic history ending now, written into the chain indexes and folded in ${STEP_MS / HOUR}-hour steps`)
  for (let to = histories[0].start + STEP_MS; ; to += STEP_MS) {
    const until = Math.min(to, end)
    for (const history of histories) await history.writeUntil(until)
    for (const history of histories) await history.fold()
    if (until === end) break
  }
  for (const history of histories) {
    printValue(`${history.shape.label}: written`, `${thousands(history.blocks)} blocks, ${thousands(history.transactions)} transactions, ${thousands(history.rows)} rows in ${(history.writeMs / 1000).toFixed(1)} s`)
    printValue(`${history.shape.label}: folded by the bucket writer, ${STEP_MS / HOUR} h at a time`, `${perSecond(history.blocks, history.foldMs)} (${(history.foldMs / 1000).toFixed(1)} s)`)
  }
  const buckets = await SELECT.one.from(MetricBuckets).columns('count(1) as count') as { count: number }
  printValue('metric buckets stored (hours and days, both chains)', thousands(Number(buckets.count)))
  for (const history of histories) {
    try {
      const rebuilt = await history.fold({ from: 0 })
      printValue(`${history.shape.label}: rebuild of everything in one fold`, `${perSecond(history.blocks, rebuilt.ms)} (${rebuilt.hours} hours, ${(rebuilt.ms / 1000).toFixed(1)} s)`)
    } catch (error) {
      printValue(`${history.shape.label}: rebuild of everything in one fold`, `FAILS: ${(error as Error).message.split('\n')[0].slice(0, 60)}`)
    }
  }
}

/** One more minute of blocks, folded as the writer's next run would. */
async function foldOneMinute(histories: History[], end: number) {
  console.log('\n  one more minute of blocks, folded as the writer\'s next run does, its queries timed')
  for (const history of histories) {
    const blocks = await history.writeUntil(end)
    const folded = await traced(`${history.shape.label}: fold of ${blocks} new blocks`, () => history.fold())
    printValue('', `${perSecond(blocks, folded.ms)} (${folded.hours} hours folded)`)
  }
}

// ---------------------------------------------------------------------------------------------
// Reads

/** The reads with the 20 ms p50 target. */
const TARGETED = [
  'overview()',
  ...WINDOW_NAMES.map(window => `keyFigures(window='${window}')`),
  `daily(topic='transactions',days=30)`,
  `rankings(ranking='producers',window='7d',top=10)`,
  ...WINDOW_NAMES.map(window => `compare(metric='tx.count',window='${window}')`),
]
const FOR_INFORMATION = [
  `anomalies(metric='tx.count',window='24h')`,
  `anomalies(metric='tx.count',window='7d')`,
  `concentration(resource='blocks',window='7d')`,
  `concentration(resource='stake',window='30d')`,
]

/** Up to `rounds` samples after one warm-up call, stopping after READ_BUDGET_MS once MIN_SAMPLES were taken. */
async function sampleWithin(rounds: number, once: () => Promise<unknown>): Promise<Figures & { samples: number }> {
  await once()
  const times: number[] = []
  const until = performance.now() + READ_BUDGET_MS
  while (times.length < rounds && (times.length < MIN_SAMPLES || performance.now() < until)) {
    const started = performance.now()
    await once()
    times.push(performance.now() - started)
  }
  return { ...figures(times), samples: times.length }
}

const ms = (value: number) => `${value.toFixed(2)} ms`.padStart(10)

function printRead(label: string, measured: Figures & { samples: number }, baseline?: Figures, targeted = false) {
  const ratio = baseline ? `${(measured.p50 / baseline.p50).toFixed(1).padStart(7)}x` : ''.padStart(8)
  const verdict = !targeted ? '' : measured.p50 <= TARGET_MS ? '  target met' : '  TARGET MISSED'
  console.log(`  ${label.padEnd(50)} p50 ${ms(measured.p50)}  p99 ${ms(measured.p99)} ${ratio}${verdict}  (${measured.samples})`)
}

async function reads(url: string, rounds: number) {
  const headers = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') }
  const get = async (path: string) => {
    const response = await fetch(`${url}/odata/v4/analytics/${path}`, { headers })
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
    return response.json()
  }
  console.log(`\n  reads through HTTP (GET /odata/v4/analytics/...; up to ${rounds} samples or ${READ_BUDGET_MS / 1000} s each, sample count last;`)
  console.log(`  ratio: p50 / the service document's p50; target: p50 ≤ ${TARGET_MS} ms; the last four for information)`)
  const overview = await get('overview()')
  const day = (chain: string) => overview.chains.find((entry: { chain: string }) => entry.chain === chain)
  printValue('what the reads see: transactions in 24 h', `chain A ${thousands(day('chain-a')?.transactions24h ?? 0)}, chain B ${thousands(day('chain-b')?.transactions24h ?? 0)}`)
  const baseline = await sampleWithin(rounds, () => get(''))
  printRead('baseline: the service document', baseline)
  const slow: string[] = []
  for (const path of [...TARGETED, ...FOR_INFORMATION]) {
    const measured = await sampleWithin(rounds, () => get(path))
    printRead(path, measured, baseline, TARGETED.includes(path))
    if (measured.p50 > TARGET_MS) slow.push(path)
  }
  if (slow.length) await whereTheTimeGoes(slow, get)
}

// ---------------------------------------------------------------------------------------------
// Where the time of the slow reads goes

interface Traced { query: string; ms: number; rows: number }

let tracing: Traced[] | undefined
let tracerInstalled = false

/** Times each database query while `tracing` is set (a handler in front of the database service's own). */
function installTracer() {
  if (tracerInstalled) return
  tracerInstalled = true
  const db = cds.db as any
  db.prepend(() => db.on('*', async (req: any, next: () => Promise<unknown>) => {
    if (!tracing || !req.query) return next()
    const started = performance.now()
    const result = await next()
    tracing?.push({ query: describe(req.query), ms: performance.now() - started, rows: Array.isArray(result) ? result.length : result ? 1 : 0 })
    return result
  }))
}

/** A query as `SELECT chaina.Transactions where blockHash (360 values)`: its kind, target and the columns it filters on. */
function describe(query: any): string {
  const kind = Object.keys(query).find(key => /^[A-Z]+$/.test(key)) ?? 'query'
  const body = query[kind] ?? {}
  const target = body.from?.ref?.[0] ?? body.into?.ref?.[0] ?? body.entity?.ref?.[0] ?? body.into ?? body.entity ?? '?'
  const columns: string[] = []
  const walk = (node: any) => {
    if (!node || typeof node !== 'object') return
    if (Array.isArray(node)) return node.forEach(walk)
    if (node.ref) columns.push(node.ref.join('.'))
    else if (node.list && columns.length) columns[columns.length - 1] += ` (${node.list.length} value${node.list.length === 1 ? '' : 's'})`
    else Object.values(node).forEach(walk)
  }
  walk(body.where)
  return `${kind} ${typeof target === 'string' ? target : target.id ?? '?'}${columns.length ? ` where ${[...new Set(columns)].join(', ')}` : ''}`
}

async function whereTheTimeGoes(slow: string[], get: (path: string) => Promise<unknown>) {
  console.log(`\n  where the time of the reads over ${TARGET_MS} ms goes: one call each, its queries timed (those of both chains overlap),`)
  console.log('  the three costliest kinds of query with their calls, time and rows')
  for (const path of slow) await traced(path, () => get(path))
}

/** Runs `work` with its database queries timed; prints the total and the three costliest kinds of query. */
async function traced<T>(label: string, work: () => Promise<T>): Promise<T> {
  installTracer()
  const queries: Traced[] = tracing = []
  const started = performance.now()
  try {
    return await work()
  } finally {
    const total = performance.now() - started
    tracing = undefined
    const byQuery = new Map<string, { calls: number; ms: number; rows: number }>()
    for (const entry of queries) {
      const sum = byQuery.get(entry.query) ?? { calls: 0, ms: 0, rows: 0 }
      byQuery.set(entry.query, { calls: sum.calls + 1, ms: sum.ms + entry.ms, rows: sum.rows + entry.rows })
    }
    const inDatabase = queries.reduce((sum, entry) => sum + entry.ms, 0)
    printValue(label, `${total.toFixed(0)} ms: ${queries.length} queries, ${inDatabase.toFixed(0)} ms in the database`)
    for (const [query, sum] of [...byQuery].sort((a, b) => b[1].ms - a[1].ms).slice(0, 3)) {
      console.log(`      ${sum.calls} x ${query.slice(0, 110)}: ${sum.ms.toFixed(0)} ms, ${thousands(sum.rows)} rows`)
    }
  }
}
