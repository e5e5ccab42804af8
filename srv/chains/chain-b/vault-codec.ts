import { Worker } from 'node:worker_threads'
import { LRUCache } from 'lru-cache'
import { appFile } from '../../lib/app-files.ts'
import type { VaultState } from './vault.ts'
import type { MidnightLedgerDefaults } from './midnight-parameters.ts'
import type { VaultDeployment } from './vault-contract-state.ts'

export type { MidnightLedgerDefaults, VaultDeployment }

/**
 * The vault's state to and from Midnight's serialized `ContractState` (vault-contract-state.ts),
 * in a worker thread of its own: the ledger is WebAssembly, and reading a state of a few thousand
 * records takes seconds, which must not stall the event loop. One thread per process, started on
 * first use (about 60 MB and a few hundred milliseconds); it does not keep the process alive, it
 * stops after a minute without work, and a thread that stopped is replaced on the next use.
 *
 * Decoded states are kept by their encoding (the same state is read on every verification until
 * the next write changes it); concurrent reads of one state share one decoding.
 */

/** The state could not be read: not a serialized ContractState of the vault's layout. */
export class VaultStateUnreadable extends Error {}

interface Pending { resolve: (result: never) => void; reject: (error: Error) => void }
type Reply = { id: number; result?: unknown; error?: string; unreadable?: boolean }

const DECODED_STATES_KEPT = 8
const IDLE_THREAD_STOPS_AFTER_MS = 60_000

let worker: Worker | undefined
let idleTimer: NodeJS.Timeout | undefined
const pending = new Map<number, Pending>()
let nextId = 0
const decoded = new LRUCache<string, Promise<VaultState>>({ max: DECODED_STATES_KEPT })

/** The serialized ContractState of a vault state, hex. */
export const encodeVaultState = (state: VaultState): Promise<string> => run<string>({ encode: state })

/** The vault state a serialized ContractState (hex) holds; rejects with VaultStateUnreadable when it holds none. */
export const decodeVaultState = (hex: string): Promise<VaultState> => shared(decoded, hex, () => run<VaultState>({ decode: hex }))

const deployments = new Map<string, Promise<VaultDeployment>>()

/** The vault's deployment on a devnet made from this seed (the same every time: see vault-contract-state.ts). */
export const vaultDeployment = (seed: string): Promise<VaultDeployment> => shared(deployments, seed, () => run<VaultDeployment>({ deploy: seed }))

const defaults = new Map<string, Promise<MidnightLedgerDefaults>>()

/** Midnight's initial ledger parameters and an empty zswap state, as a devnet's genesis takes them (midnight-parameters.ts). */
export const midnightLedgerDefaults = (): Promise<MidnightLedgerDefaults> => shared(defaults, 'initial', () => run<MidnightLedgerDefaults>({ defaults: true }))

/** The answer kept for a key, or the one being made: made once, and forgotten if it fails. */
interface Kept<Value> { get(key: string): Promise<Value> | undefined; set(key: string, value: Promise<Value>): unknown; delete(key: string): unknown }

function shared<Value>(kept: Kept<Value>, key: string, make: () => Promise<Value>): Promise<Value> {
  let answer = kept.get(key)
  if (!answer) {
    answer = make()
    kept.set(key, answer)
    answer.catch(() => kept.delete(key))
  }
  return answer
}

/** Stops the thread now: what it was doing is rejected, and the next use starts a new one. */
export async function stopVaultCodec(): Promise<void> {
  const thread = worker
  if (thread) await thread.terminate()
}

function run<Result>(task: { encode: VaultState } | { decode: string } | { deploy: string } | { defaults: true }): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    const id = ++nextId
    pending.set(id, { resolve: resolve as (result: never) => void, reject })
    clearTimeout(idleTimer)
    const thread = (worker ??= spawn())
    thread.ref()
    thread.postMessage({ id, ...task })
  })
}

function spawn(): Worker {
  const thread = new Worker(appFile('vaultCodecWorker'), { execArgv: ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON'] })
  thread.on('message', ({ id, result, error, unreadable }: Reply) => {
    const task = pending.get(id)
    pending.delete(id)
    if (!pending.size) {
      thread.unref()
      idleTimer = setTimeout(() => {
        // Forgotten first: a task sent from now on goes to a new thread, not to this stopping one.
        if (worker === thread) worker = undefined
        void thread.terminate()
      }, IDLE_THREAD_STOPS_AFTER_MS).unref()
    }
    if (error !== undefined) task?.reject(unreadable ? new VaultStateUnreadable(error) : new Error(error))
    else task?.resolve(result as never)
  })
  const lose = (error: Error) => {
    if (worker !== thread) return
    worker = undefined
    for (const task of pending.values()) task.reject(error)
    pending.clear()
  }
  thread.on('error', lose)
  thread.on('exit', () => lose(new Error('the vault codec thread stopped')))
  return thread
}
