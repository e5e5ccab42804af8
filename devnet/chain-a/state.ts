import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { DevnetStateError, readStateFile, shown, writeAtomically } from '../shared/state.ts'
import { fromHex, toHex } from './crypto.ts'
import { LedgerRuleError } from './decode.ts'
import { Ledger, type LedgerJournal, type LedgerOptions } from './ledger.ts'
import type { Block, LedgerTx } from './types.ts'

/**
 * The devnet's chain on disk, so that a development server resumes the same chain after a restart.
 * A state folder holds:
 * - `genesis.json`: what the genesis derives from (seed, wallets, slot length, epoch length, k), the
 *   system start and the chain's own nonce; written once, atomically;
 * - `chain.ndjson`: an append-only log, one line per accepted transaction (its CBOR) and per block
 *   (slot, hash and the hashes of its transactions). At start the blocks are replayed, each
 *   transaction validated again at its block's slot, and every block must come out with its hash;
 *   transactions accepted but never included go back to the mempool when they still validate;
 * - `lock`: the pid of the process serving the chain.
 * The slot clock runs on from the saved system start, as a real chain's would.
 */

const STATE_FORMAT = 1
const GENESIS_FILE = 'genesis.json'
const JOURNAL_FILE = 'chain.ndjson'
const LOCK_FILE = 'lock'
const RESET = 'run `npm run devnet -- reset` to start a new chain'

/** The options a chain is made from; the saved chain's own values win over the configured ones. */
type ChainParameters = Omit<LedgerOptions, 'systemStartMs' | 'genesisNonce'>
const PARAMETER_NAMES = ['seed', 'wallets', 'slotLengthMs', 'epochLength', 'securityParam'] as const

interface SavedGenesis extends ChainParameters {
  format: number
  systemStartMs: number
  nonce: string
  createdAt: string
}

type TxEntry = { tx: string; cbor: string }
type BlockEntry = { block: number; slot: number; hash: string; txs: string[] }
type JournalEntry = TxEntry | BlockEntry

export interface OpenedChain {
  ledger: Ledger
  /** The state folder, or undefined for a chain kept in memory. */
  stateDir: string | undefined
  /** True when the chain was resumed from its state folder. */
  resumed: boolean
  /** Stops writing the log and releases the state folder. */
  close(): void
}

/** A new chain in memory, or the chain of the state folder (a new one there when it has none yet). */
export function openChain(parameters: ChainParameters, stateDir: string | undefined): OpenedChain {
  if (!stateDir) return { ledger: new Ledger({ ...parameters, systemStartMs: wholeSecondNow() }), stateDir: undefined, resumed: false, close() {} }
  return openSavedChain(parameters, stateDir)
}

const wholeSecondNow = () => Math.floor(Date.now() / 1000) * 1000

function openSavedChain(parameters: ChainParameters, dir: string): OpenedChain {
  guard(dir, () => mkdirSync(dir, { recursive: true }))
  acquireLock(dir)
  const releaseOnExit = () => releaseLock(dir)
  process.once('exit', releaseOnExit)
  const release = () => {
    process.removeListener('exit', releaseOnExit)
    releaseLock(dir)
  }
  try {
    const saved = readGenesis(dir)
    const genesis = saved ?? createGenesis(dir, parameters)
    warnAboutKeptParameters(dir, genesis, parameters)
    const ledger = new Ledger({ ...pickParameters(genesis), systemStartMs: genesis.systemStartMs, genesisNonce: genesis.nonce })
    replay(dir, ledger, readJournal(dir))
    const journal = new FileJournal(join(dir, JOURNAL_FILE))
    ledger.journal = journal
    let open = true
    return {
      ledger, stateDir: dir, resumed: saved !== undefined,
      close() {
        if (!open) return
        open = false
        ledger.journal = undefined
        journal.close()
        release()
      },
    }
  } catch (error) {
    release()
    throw error
  }
}

const pickParameters = (source: ChainParameters): ChainParameters =>
  ({ seed: source.seed, wallets: source.wallets, slotLengthMs: source.slotLengthMs, epochLength: source.epochLength, securityParam: source.securityParam })

function warnAboutKeptParameters(dir: string, genesis: SavedGenesis, configured: ChainParameters) {
  const differing = PARAMETER_NAMES.filter(name => genesis[name] !== configured[name])
  if (!differing.length) return
  console.warn(`[chain-a devnet] resumes the chain in ${shown(dir)} with its own ${differing.map(name => `${name} ${JSON.stringify(genesis[name])}`).join(', ')} ` +
    `(configured: ${differing.map(name => JSON.stringify(configured[name])).join(', ')}); ${RESET} with the configured settings`)
}

// ---- genesis.json ---------------------------------------------------------------------------

/** The saved genesis, or undefined when the folder holds no chain yet. */
export function readGenesis(dir: string): SavedGenesis | undefined {
  const genesis = readStateFile(join(dir, GENESIS_FILE), STATE_FORMAT, {
    io: error => guardError(dir, error),
    notJson: () => unusable(dir, `${GENESIS_FILE} is not JSON`),
    wrongFormat: found => unusable(dir, `${GENESIS_FILE} has format ${JSON.stringify(found)}, this devnet reads format ${STATE_FORMAT}`),
  })
  if (!genesis) {
    if (existsSync(join(dir, JOURNAL_FILE))) throw unusable(dir, `${JOURNAL_FILE} is there but ${GENESIS_FILE} is missing`)
    return undefined
  }
  const wellFormed = typeof genesis.seed === 'string' && typeof genesis.nonce === 'string' && typeof genesis.createdAt === 'string' &&
    ['wallets', 'slotLengthMs', 'epochLength', 'securityParam', 'systemStartMs'].every(name => Number.isInteger(genesis[name]) && (genesis[name] as number) >= 0)
  if (!wellFormed) throw unusable(dir, `${GENESIS_FILE} lacks or mistypes one of seed, nonce, wallets, slotLengthMs, epochLength, securityParam, systemStartMs`)
  return genesis as unknown as SavedGenesis
}

function createGenesis(dir: string, parameters: ChainParameters): SavedGenesis {
  const genesis: SavedGenesis = {
    format: STATE_FORMAT, ...pickParameters(parameters), systemStartMs: wholeSecondNow(), nonce: randomBytes(16).toString('hex'), createdAt: new Date().toISOString(),
  }
  guard(dir, () => {
    writeFileSync(join(dir, JOURNAL_FILE), '')
    writeAtomically(join(dir, GENESIS_FILE), JSON.stringify(genesis, null, 2) + '\n')
  })
  return genesis
}

// ---- chain.ndjson ---------------------------------------------------------------------------

interface NumberedEntry {
  line: number
  entry: JournalEntry
}

/** The log's entries. A last line without its newline was cut off by a crash: it is dropped, and cut from the file. */
function readJournal(dir: string): NumberedEntry[] {
  const file = join(dir, JOURNAL_FILE)
  const text = guard(dir, () => (existsSync(file) ? readFileSync(file, 'utf8') : ''))
  const complete = text.slice(0, text.lastIndexOf('\n') + 1)
  if (complete.length < text.length) {
    guard(dir, () => {
      const fd = openSync(file, 'r+')
      ftruncateSync(fd, Buffer.byteLength(complete))
      closeSync(fd)
    })
    console.warn(`[chain-a devnet] dropped the incomplete last line of ${shown(file)} (the process stopped while writing it)`)
  }
  return complete.split('\n').slice(0, -1).map((text, index) => ({ line: index + 1, entry: parseEntry(dir, text, index + 1) }))
}

const HASH = /^[0-9a-f]{64}$/
const HEX = /^(?:[0-9a-f]{2})+$/

function parseEntry(dir: string, text: string, line: number): JournalEntry {
  let entry: Record<string, unknown>
  try {
    entry = Object(JSON.parse(text))
  } catch {
    throw unusable(dir, `${JOURNAL_FILE} line ${line} is not JSON`)
  }
  const isHash = (value: unknown) => typeof value === 'string' && HASH.test(value)
  const isTx = isHash(entry.tx) && typeof entry.cbor === 'string' && HEX.test(entry.cbor)
  const isBlock = Number.isInteger(entry.block) && Number.isInteger(entry.slot) && isHash(entry.hash) && Array.isArray(entry.txs) && entry.txs.every(isHash)
  if (!isTx && !isBlock) throw unusable(dir, `${JOURNAL_FILE} line ${line} is neither a transaction nor a block entry`)
  return entry as unknown as JournalEntry
}

/** Applies the saved blocks again, then puts back into the mempool what was accepted but never included. */
function replay(dir: string, ledger: Ledger, entries: NumberedEntry[]) {
  const pending = new Map<string, Uint8Array>()
  for (const { line, entry } of entries) {
    if ('tx' in entry) pending.set(entry.tx, fromHex(entry.cbor))
    else replayBlock(dir, ledger, entry, line, pending)
  }
  for (const bytes of pending.values()) {
    try {
      ledger.submit(bytes)
    } catch (error) {
      // Expired, or spent by another transaction meanwhile: the node would have dropped it too.
      if (!(error instanceof LedgerRuleError)) throw error
    }
  }
}

function replayBlock(dir: string, ledger: Ledger, entry: BlockEntry, line: number, pending: Map<string, Uint8Array>) {
  const at = `${JOURNAL_FILE} line ${line} (block #${entry.block})`
  if (entry.block !== ledger.tip.height + 1 || entry.slot <= ledger.tip.slot) {
    throw unusable(dir, `${at} does not follow block #${ledger.tip.height} at slot ${ledger.tip.slot}`)
  }
  const transactions = entry.txs.map(hash => {
    const bytes = pending.get(hash)
    if (!bytes) throw unusable(dir, `${at} includes transaction ${hash}, which no earlier line holds`)
    pending.delete(hash)
    return bytes
  })
  let block: Block
  try {
    block = ledger.replayBlock(entry.slot, transactions)
  } catch (error) {
    if (error instanceof LedgerRuleError) throw unusable(dir, `${at} no longer validates (${error.message})`)
    throw error
  }
  const renamed = block.txs.findIndex((hash, index) => hash !== entry.txs[index])
  if (renamed >= 0) throw unusable(dir, `${at} lists transaction ${entry.txs[renamed]}, whose CBOR hashes to ${block.txs[renamed]}`)
  if (block.hash !== entry.hash) throw unusable(dir, `${at} replays to hash ${block.hash}, the log says ${entry.hash}`)
}

/** Appends every accepted transaction and every block to the log, one line each. */
class FileJournal implements LedgerJournal {
  private readonly fd: number

  constructor(file: string) {
    this.fd = openSync(file, 'a')
  }

  submitted(tx: LedgerTx) {
    this.append({ tx: tx.hash, cbor: toHex(tx.cbor!) })
  }

  produced(block: Block) {
    this.append({ block: block.height, slot: block.slot, hash: block.hash, txs: block.txs })
  }

  close() {
    closeSync(this.fd)
  }

  private append(entry: JournalEntry) {
    writeSync(this.fd, JSON.stringify(entry) + '\n')
  }
}

// ---- lock -----------------------------------------------------------------------------------

/** Folders this process serves a chain of (a lock with this process's pid and not listed here was left by an earlier process of the same pid). */
const lockedHere = new Set<string>()

/** The pid of the live process that serves the chain of the folder, if any (stale locks do not count). */
function lockHolder(dir: string): number | undefined {
  let pid: number
  try {
    pid = Number(readFileSync(join(dir, LOCK_FILE), 'utf8').trim())
  } catch {
    return undefined
  }
  if (pid === process.pid) return lockedHere.has(dir) ? pid : undefined
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const inUse = (dir: string, pid: number) =>
  new DevnetStateError(`The chain-A devnet state in ${shown(dir)} is in use by process ${pid}: stop it first (or set DEVNET_STATE_DIR to another folder; ` +
    `if process ${pid} is no devnet, delete ${shown(join(dir, LOCK_FILE))}).`)

function acquireLock(dir: string) {
  const file = join(dir, LOCK_FILE)
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' })
      lockedHere.add(dir)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw guardError(dir, error)
    }
    const holder = lockHolder(dir)
    if (holder !== undefined) throw inUse(dir, holder)
    guard(dir, () => unlinkSync(file))
  }
}

function releaseLock(dir: string) {
  const file = join(dir, LOCK_FILE)
  if (!lockedHere.delete(dir)) return
  try {
    if (Number(readFileSync(file, 'utf8').trim()) === process.pid) unlinkSync(file)
  } catch {
    // Already gone.
  }
}

// ---- reset ----------------------------------------------------------------------------------

interface SavedChainSummary {
  systemStart: string
  createdAt: string
  /** Height of the last saved block (0: only the genesis block). */
  tipHeight: number
}

interface ResetOutcome {
  dir: string
  /** What was deleted; undefined when the folder held no chain. */
  deleted: SavedChainSummary | 'unreadable' | undefined
}

/** Deletes the saved chain of the folder (only the devnet's own files), unless a live process serves it. */
export function resetState(dir: string): ResetOutcome {
  const holder = lockHolder(dir)
  if (holder !== undefined) throw inUse(dir, holder)
  const own = (name: string) => name === GENESIS_FILE || name === JOURNAL_FILE || name === LOCK_FILE || (name.startsWith(`${GENESIS_FILE}.`) && name.endsWith('.tmp'))
  const names = existsSync(dir) ? guard(dir, () => readdirSync(dir)).filter(own) : []
  if (!names.some(name => name === GENESIS_FILE || name === JOURNAL_FILE)) {
    for (const name of names) guard(dir, () => unlinkSync(join(dir, name)))
    return { dir, deleted: undefined }
  }
  const summary = summarise(dir)
  for (const name of names) guard(dir, () => unlinkSync(join(dir, name)))
  if (guard(dir, () => readdirSync(dir)).length === 0) guard(dir, () => rmdirSync(dir))
  return { dir, deleted: summary }
}

/** What the folder's chain is, read leniently (a reset also deletes a chain that no longer reads). */
function summarise(dir: string): SavedChainSummary | 'unreadable' {
  try {
    const genesis = readGenesis(dir)
    if (!genesis) return 'unreadable'
    const text = readFileSync(join(dir, JOURNAL_FILE), 'utf8')
    const lastBlock = text.split('\n').reverse().find(line => line.startsWith('{"block":'))
    return { systemStart: new Date(genesis.systemStartMs).toISOString(), createdAt: genesis.createdAt, tipHeight: lastBlock ? JSON.parse(lastBlock).block : 0 }
  } catch {
    return 'unreadable'
  }
}

// ---- errors ---------------------------------------------------------------------------------

const unusable = (dir: string, problem: string) =>
  new DevnetStateError(`The chain-A devnet cannot resume the chain saved in ${shown(dir)}: ${problem}. Restore the folder, or ${RESET} (this deletes the saved chain).`)

function guardError(dir: string, error: unknown): Error {
  if (error instanceof DevnetStateError) return error
  const { code, message } = error as NodeJS.ErrnoException
  if (!code) return error as Error
  return new DevnetStateError(`The chain-A devnet cannot use its state folder ${shown(dir)}: ${message}. Check the folder, set DEVNET_STATE_DIR to another one, or ${RESET}.`)
}

/** Runs a file-system step; its system errors become one-line DevnetStateErrors. */
function guard<T>(dir: string, step: () => T): T {
  try {
    return step()
  } catch (error) {
    throw guardError(dir, error)
  }
}
