import { createHash } from 'node:crypto'
import { ChargedState, ContractDeploy, ContractOperation, ContractState, CostModel, Intent, StateMap, StateValue, Transaction, type AlignedValue } from '@midnight-ntwrk/ledger-v8'
import { VAULT_CIRCUITS, emptyVaultState, type VaultAttestation, type VaultDocument, type VaultState } from './vault.ts'

/**
 * The attestation vault's state in Midnight's own form: a serialized `ContractState` of the ledger
 * (`@midnight-ntwrk/ledger-v8`), as a contract action's `state` carries it on the public indexer.
 * Midnight's own providers deserialize it; the adapter reads the vault from it.
 *
 * The layout (the vault's ledger):
 * - field 0, documents: Map<Bytes<32> payload hash, Map<Bytes<32> attester id, Cell<anchor>>>
 * - field 1, commitments: Map<Bytes<32> commitment, Map<Bytes<32> attester id, Cell<{ height }>>>
 * - field 2, attestations: Map<Bytes<32> claim key, Cell<attestation>>
 * A cell holds its record as the bytes of its UTF-8 JSON. The vault's circuits are its entry
 * points (operations without a verifier key: the devnet checks its calls itself).
 *
 * Loaded only in the codec's worker thread (vault-codec.ts): the ledger is WebAssembly, and
 * reading a large state takes long enough to keep it off the event loop.
 */

const DOCUMENTS = 0
const COMMITMENTS = 1
const ATTESTATIONS = 2

export function encodeVaultContractState(state: VaultState): Uint8Array {
  return vaultContract(state).serialize()
}

/** The vault's deployment on a devnet: a Midnight transaction deploying its empty state. */
export interface VaultDeployment {
  /** The contract's address (64 hex), as the deployment makes it. */
  address: string
  /** The serialized transaction, proven and bound (hex), as a transaction's `raw` carries it. */
  transaction: string
  hash: string
  identifiers: string[]
}

/** Midnight's network id of a local chain. */
const DEVNET_NETWORK_ID = 'undeployed'
/** The deployment's time to live: fixed, so that a seed always makes the same deployment. */
const DEPLOY_TTL = new Date(Date.UTC(2100, 0, 1))

/**
 * The deployment of the vault on a devnet made from this seed. A deployment and its address are
 * drawn at random by the ledger; here the randomness comes from the seed, so that a devnet's
 * vault has the same address at every start (and a client can know it before). A deployment
 * carries no proof (its operations have no verifier key), so nothing is proven: the prover is
 * never asked.
 */
export async function vaultDeployment(seed: string): Promise<VaultDeployment> {
  const random = globalThis.crypto.getRandomValues
  globalThis.crypto.getRandomValues = randomFrom(seed)
  try {
    const deploy = new ContractDeploy(vaultContract(emptyVaultState()))
    const unproven = Transaction.fromParts(DEVNET_NETWORK_ID, undefined, undefined, Intent.new(DEPLOY_TTL).addDeploy(deploy))
    const neverAsked = () => Promise.reject(new Error('a deployment has nothing to prove'))
    const transaction = (await unproven.prove({ check: neverAsked, prove: neverAsked }, CostModel.initialCostModel())).bind()
    return { address: deploy.address, transaction: Buffer.from(transaction.serialize()).toString('hex'), hash: transaction.transactionHash(), identifiers: transaction.identifiers() }
  } finally {
    globalThis.crypto.getRandomValues = random
  }
}

/** A stream of bytes from a seed (SHA-256 in counter mode), in place of the system's randomness. */
function randomFrom(seed: string): Crypto['getRandomValues'] {
  let counter = 0
  return <T extends ArrayBufferView | null>(array: T): T => {
    if (!array) return array
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength)
    for (let at = 0; at < bytes.length; at += 32) {
      const block = createHash('sha256').update(`vault deployment:${seed}:${counter++}`).digest()
      bytes.set(block.subarray(0, Math.min(32, bytes.length - at)), at)
    }
    return array
  }
}

function vaultContract(state: VaultState): ContractState {
  let documents = new StateMap()
  for (const [payloadHash, anchors] of Object.entries(state.documents)) {
    let byAttester = new StateMap()
    for (const [attester, { attester: _sameAsKey, ...anchor }] of Object.entries(anchors)) byAttester = byAttester.insert(bytes32(attester), record(anchor))
    documents = documents.insert(bytes32(payloadHash), StateValue.newMap(byAttester))
  }
  let commitments = new StateMap()
  for (const [commitment, byAttester] of Object.entries(state.commitments)) {
    let recorded = new StateMap()
    for (const [attester, at] of Object.entries(byAttester)) recorded = recorded.insert(bytes32(attester), record(at))
    commitments = commitments.insert(bytes32(commitment), StateValue.newMap(recorded))
  }
  let attestations = new StateMap()
  for (const [key, attestation] of Object.entries(state.attestations)) attestations = attestations.insert(bytes32(key), record(attestation))

  const contract = new ContractState()
  contract.data = new ChargedState(StateValue.newArray()
    .arrayPush(StateValue.newMap(documents))
    .arrayPush(StateValue.newMap(commitments))
    .arrayPush(StateValue.newMap(attestations)))
  for (const circuit of VAULT_CIRCUITS) contract.setOperation(circuit, new ContractOperation())
  return contract
}

/** The vault's state from a serialized `ContractState`; throws when it is not one of this layout. */
export function decodeVaultContractState(serialized: Uint8Array): VaultState {
  const fields = ContractState.deserialize(serialized).data.state.asArray()
  if (!fields || fields.length !== 3) throw new Error('the contract state is not the attestation vault\'s: its ledger is not an array of 3 fields')
  const state = emptyVaultState()
  for (const [payloadHash, anchors] of entriesOf(fields[DOCUMENTS], 'documents')) {
    state.documents[payloadHash] = {}
    for (const [attester, anchor] of entriesOf(anchors, 'documents')) state.documents[payloadHash][attester] = { ...readRecord<Omit<VaultDocument, 'attester'>>(anchor), attester } as VaultDocument
  }
  for (const [commitment, byAttester] of entriesOf(fields[COMMITMENTS], 'commitments')) {
    state.commitments[commitment] = {}
    for (const [attester, at] of entriesOf(byAttester, 'commitments')) state.commitments[commitment][attester] = readRecord<{ height: number }>(at)
  }
  for (const [key, attestation] of entriesOf(fields[ATTESTATIONS], 'attestations')) state.attestations[key] = readRecord<VaultAttestation>(attestation)
  return state
}

/** Bytes<32> from 64 hex characters. A field-aligned value leaves its trailing zero bytes off. */
function bytes32(hex: string): AlignedValue {
  return { value: [withoutTrailingZeros(Buffer.from(hex, 'hex'))], alignment: [{ tag: 'atom', value: { tag: 'bytes', length: 32 } }] }
}

function record(value: object): StateValue {
  const text = Buffer.from(JSON.stringify(value))
  return StateValue.newCell({ value: [withoutTrailingZeros(text)], alignment: [{ tag: 'atom', value: { tag: 'bytes', length: text.length } }] })
}

function withoutTrailingZeros(bytes: Uint8Array): Uint8Array {
  let end = bytes.length
  while (end > 0 && bytes[end - 1] === 0) end--
  return bytes.subarray(0, end)
}

function entriesOf(value: StateValue, field: string): [string, StateValue][] {
  const map = value.type() === 'map' ? value.asMap() : undefined
  if (!map) throw new Error(`the contract state is not the attestation vault's: ${field} is not a map`)
  return map.keys().map(key => [hex32(key), map.get(key)!])
}

function hex32(key: AlignedValue): string {
  const padded = Buffer.alloc(32)
  Buffer.from(key.value[0] ?? new Uint8Array()).copy(padded)
  return padded.toString('hex')
}

function readRecord<T>(value: StateValue): T {
  if (value.type() !== 'cell') throw new Error('the contract state is not the attestation vault\'s: a record is not a cell')
  return JSON.parse(Buffer.from(value.asCell().value[0] ?? new Uint8Array()).toString('utf8')) as T
}
