import { decodeVaultState, encodeVaultState, stopVaultCodec, VaultStateUnreadable } from '../../../srv/chains/chain-b/vault-codec.ts'
import { claimKeyOf, emptyVaultState, type VaultState } from '../../../srv/chains/chain-b/vault.ts'
import { hash } from './helpers.ts'

/**
 * The vault's state as Midnight's serialized ContractState (vault-contract-state.ts), in the
 * codec's worker thread: every kind of record comes back as it went in, including keys whose last
 * bytes are zero (a field-aligned value drops them) and the largest envelope a call may carry;
 * bytes that are no such state are refused with VaultStateUnreadable, and the thread goes on; a
 * thread that stops mid-work fails that work, and the next use starts a new one.
 */

const attester = hash('attester')
const endsInZeros = 'ab'.repeat(30) + '0000'

function everyKindOfRecord(): VaultState {
  const state = emptyVaultState()
  state.documents[hash('doc')] = {
    [attester]: { metadataHash: hash('meta'), attester, height: 3, txHash: hash('tx'), contentRoot: '0e'.repeat(32), schemaId: hash('schema'), fieldCount: 4, rootVouchedBy: hash('sponsor'), disclosures: { [hash('reader')]: 2 } },
    [endsInZeros]: { metadataHash: endsInZeros, attester: endsInZeros, height: 4, txHash: hash('tx2') },
  }
  state.documents[endsInZeros] = { [attester]: { metadataHash: endsInZeros, attester, height: 5, txHash: hash('tx3'), envelope: JSON.stringify({ output: 'é'.repeat(8000) }) } }
  state.commitments[hash('commitment')] = { [attester]: { height: 2 }, [endsInZeros]: { height: 6 } }
  const signals = ['1', '2', '3']
  state.attestations[claimKeyOf('document_compare', signals)] = { circuit: 'document_compare', publicSignals: signals, payloadHash: hash('doc'), payloadHashB: endsInZeros, attester, height: 7, txHash: hash('tx4') }
  return state
}

test('every kind of record survives the round trip through a serialized ContractState', async () => {
  const state = everyKindOfRecord()
  const encoded = await encodeVaultState(state)
  expect(encoded).toMatch(/^([0-9a-f]{2})+$/)
  expect(Buffer.from(encoded, 'hex').toString('latin1')).toContain('midnight:contract-state')
  expect(await decodeVaultState(encoded)).toEqual(state)
  expect(await decodeVaultState(await encodeVaultState(emptyVaultState()))).toEqual(emptyVaultState())
})

test('bytes that are no vault state are refused with VaultStateUnreadable, and the codec goes on', async () => {
  for (const bad of ['', '00', 'ff'.repeat(40), Buffer.from(JSON.stringify(emptyVaultState())).toString('hex')])
    await expect(decodeVaultState(bad)).rejects.toBeInstanceOf(VaultStateUnreadable)
  const state = everyKindOfRecord()
  expect(await decodeVaultState(await encodeVaultState(state))).toEqual(state)
})

test('concurrent reads of one state share one decoding, and the result is the same object', async () => {
  const encoded = await encodeVaultState(everyKindOfRecord())
  const [first, second] = await Promise.all([decodeVaultState(encoded), decodeVaultState(encoded)])
  expect(first).toBe(second)
})

test('a thread stopped in the middle of a decoding fails it (not as unreadable), and the next use starts a new thread', async () => {
  const large = emptyVaultState()
  for (let i = 0; i < 600; i++) large.documents[hash(`large ${i}`)] = { [attester]: { metadataHash: hash(`meta ${i}`), attester, height: i, txHash: hash(`tx ${i}`) } }
  const encoded = await encodeVaultState(large)
  const decoding = decodeVaultState(encoded)
  await stopVaultCodec()
  const failure = await decoding.then(() => undefined, (error: Error) => error)
  expect(failure).toBeInstanceOf(Error)
  expect(failure).not.toBeInstanceOf(VaultStateUnreadable)
  // Not kept as an answer: the same state is decoded anew.
  expect(await decodeVaultState(encoded)).toEqual(large)
}, 60_000)
