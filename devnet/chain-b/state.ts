import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DevnetStateError, readStateFile, shown, writeAtomically } from '../shared/state.ts'
import { midnightLedgerDefaults, vaultDeployment } from '../../srv/chains/chain-b/vault-codec.ts'
import { Ledger } from './ledger.ts'
import type { Block, StoredBlock, TxBody } from './types.ts'

/**
 * The chain-B devnet's chain on disk, so a development server resumes it after a restart. A state
 * folder holds `genesis.json` (seed, epoch length, genesis time; written once), `blocks.ndjson`
 * (append-only: one line per block, its header and transaction bodies; rewritten only by a reorg)
 * and `mempool.ndjson` (the transactions accepted but not yet in a block: a line appended for each
 * one accepted, the file rewritten with what is left after each block). At start the blocks are
 * replayed and each must come out with its saved hash.
 */

/** 4: Midnight's ledger parameters and fee formula (3: the devnet's own; 2: the vault deployed by a system transaction). */
const STATE_FORMAT = 4
const GENESIS_FILE = 'genesis.json'
const BLOCKS_FILE = 'blocks.ndjson'
const MEMPOOL_FILE = 'mempool.ndjson'
/** The mempool as earlier versions kept it: one JSON array, rewritten whole at every submission. Read once, then replaced. */
const EARLIER_MEMPOOL_FILE = 'mempool.json'
const RESET = 'run `npm run devnet -- --chain b reset` to start a new chain'

interface SavedGenesis {
  format: number
  seed: string
  epochLength: number
  genesisTimestamp: number
  createdAt: string
}

export interface OpenedChain {
  ledger: Ledger
  stateDir: string | undefined
  resumed: boolean
  close(): void
}

/** A new chain in memory, or the chain of the state folder (a new one there when it has none). */
export async function openChain(options: { seed: string; epochLength: number }, stateDir: string | undefined): Promise<OpenedChain> {
  if (!stateDir) {
    const ledger = new Ledger({ ...options, genesisTimestamp: Math.floor(Date.now() / 1000), vault: await vaultDeployment(options.seed), midnight: await midnightLedgerDefaults() })
    ledger.createGenesis()
    return { ledger, stateDir: undefined, resumed: false, close() {} }
  }
  mkdirSync(stateDir, { recursive: true })
  const saved = readGenesis(stateDir)
  const genesis = saved ?? { format: STATE_FORMAT, ...options, genesisTimestamp: Math.floor(Date.now() / 1000), createdAt: new Date().toISOString() }
  const ledger = new Ledger({ ...genesis, vault: await vaultDeployment(genesis.seed), midnight: await midnightLedgerDefaults() })
  if (saved) resume(ledger, stateDir)
  else {
    writeAtomically(join(stateDir, GENESIS_FILE), JSON.stringify(genesis, null, 2) + '\n')
    writeFileSync(join(stateDir, BLOCKS_FILE), '')
    appendBlock(stateDir, ledger.createGenesis())
  }
  const onBlock = (block: Block) => appendBlock(stateDir, block)
  const onReorg = () => writeAtomically(join(stateDir, BLOCKS_FILE), ledger.storedBlocks().map(line).join(''))
  const onAccepted = (body: TxBody) => appendFileSync(join(stateDir, MEMPOOL_FILE), line(body))
  const onMempool = (mempool: TxBody[]) => writeAtomically(join(stateDir, MEMPOOL_FILE), mempool.map(line).join(''))
  if (existsSync(join(stateDir, EARLIER_MEMPOOL_FILE))) {
    onMempool(ledger.mempool)
    rmSync(join(stateDir, EARLIER_MEMPOOL_FILE))
  }
  ledger.on('block', onBlock)
  ledger.on('reorg', onReorg)
  ledger.on('accepted', onAccepted)
  ledger.on('mempool', onMempool)
  return {
    ledger, stateDir, resumed: !!saved,
    close() {
      ledger.off('block', onBlock)
      ledger.off('reorg', onReorg)
      ledger.off('accepted', onAccepted)
      ledger.off('mempool', onMempool)
    },
  }
}

export function readGenesis(dir: string): SavedGenesis | undefined {
  const unreadable = () => new DevnetStateError(`The chain-B devnet chain in ${shown(dir)} is unreadable (${GENESIS_FILE}); ${RESET}.`)
  const genesis = readStateFile(join(dir, GENESIS_FILE), STATE_FORMAT, {
    io: unreadable,
    notJson: unreadable,
    wrongFormat: found => new DevnetStateError(`The chain-B devnet chain in ${shown(dir)} has format ${found}, this version reads ${STATE_FORMAT}; ${RESET}.`),
  })
  return genesis as SavedGenesis | undefined
}

function resume(ledger: Ledger, dir: string) {
  const text = existsSync(join(dir, BLOCKS_FILE)) ? readFileSync(join(dir, BLOCKS_FILE), 'utf8') : ''
  const lines = text.split('\n').filter(Boolean)
  const blocks: StoredBlock[] = []
  for (const [i, text] of lines.entries()) {
    try {
      blocks.push(JSON.parse(text))
    } catch {
      // A last line cut off by a crash is dropped; one in the middle is damage.
      if (i === lines.length - 1) break
      throw new DevnetStateError(`The chain-B devnet chain in ${shown(dir)} has a damaged line ${i + 1} in ${BLOCKS_FILE}; ${RESET}.`)
    }
  }
  if (!blocks.length) throw new DevnetStateError(`The chain-B devnet chain in ${shown(dir)} has no blocks; ${RESET}.`)
  try {
    ledger.replay(blocks)
  } catch (error) {
    throw new DevnetStateError(`The chain-B devnet chain in ${shown(dir)} does not replay (${(error as Error).message}); ${RESET}.`)
  }
  ledger.mempool = savedMempool(dir)
}

/** The transactions accepted but not in a block; a line that does not read (one cut off by a crash) is left out. */
function savedMempool(dir: string): TxBody[] {
  const readable = (text: string): TxBody | undefined => {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }
  if (existsSync(join(dir, MEMPOOL_FILE))) return readFileSync(join(dir, MEMPOOL_FILE), 'utf8').split('\n').filter(Boolean).map(readable).filter(body => body !== undefined)
  if (!existsSync(join(dir, EARLIER_MEMPOOL_FILE))) return []
  const earlier = readable(readFileSync(join(dir, EARLIER_MEMPOOL_FILE), 'utf8'))
  return Array.isArray(earlier) ? earlier : []
}

const line = (entry: StoredBlock | TxBody) => JSON.stringify(entry) + '\n'

function appendBlock(dir: string, block: Block) {
  appendFileSync(join(dir, BLOCKS_FILE), line({ height: block.height, timestamp: block.timestamp, salt: block.salt, hash: block.hash, bodies: block.transactions.map(tx => tx.body) }))
}

/** Deletes the saved chain; answers what it deleted. */
export function resetState(dir: string): { deleted?: { tipHeight: number; createdAt: string } | 'unreadable' } {
  if (!existsSync(join(dir, GENESIS_FILE))) return {}
  let deleted: { tipHeight: number; createdAt: string } | 'unreadable' = 'unreadable'
  try {
    const genesis = JSON.parse(readFileSync(join(dir, GENESIS_FILE), 'utf8')) as SavedGenesis
    const lines = readFileSync(join(dir, BLOCKS_FILE), 'utf8').split('\n').filter(Boolean)
    deleted = { tipHeight: lines.length - 1, createdAt: genesis.createdAt }
  } catch {
    // Deleted all the same.
  }
  for (const file of [GENESIS_FILE, BLOCKS_FILE, MEMPOOL_FILE, EARLIER_MEMPOOL_FILE]) rmSync(join(dir, file), { force: true })
  return { deleted }
}
