import { parentPort } from 'node:worker_threads'
import { decodeVaultContractState, encodeVaultContractState, vaultDeployment } from './vault-contract-state.ts'
import { midnightLedgerDefaults } from './midnight-parameters.ts'
import type { VaultState } from './vault.ts'

/** The vault codec's thread (see vault-codec.ts): one state encoded or decoded at a time, or what a devnet's genesis takes from the ledger. */

type Task = { id: number; encode: VaultState } | { id: number; decode: string } | { id: number; deploy: string } | { id: number; defaults: true }

parentPort!.on('message', async (task: Task) => {
  try {
    if ('defaults' in task) parentPort!.postMessage({ id: task.id, result: midnightLedgerDefaults() })
    else if ('deploy' in task) parentPort!.postMessage({ id: task.id, result: await vaultDeployment(task.deploy) })
    else if ('encode' in task) parentPort!.postMessage({ id: task.id, result: Buffer.from(encodeVaultContractState(task.encode)).toString('hex') })
    else parentPort!.postMessage({ id: task.id, result: decodeVaultContractState(Buffer.from(task.decode, 'hex')) })
  } catch (error) {
    parentPort!.postMessage({ id: task.id, error: String((error as Error)?.message ?? error).slice(0, 500), unreadable: 'decode' in task })
  }
})
