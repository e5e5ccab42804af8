import { ChargedState, ContractOperation, ContractState, StateMap, StateValue, type AlignedValue } from '@midnight-ntwrk/ledger-v8'
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
  return contract.serialize()
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
