import { createHash } from 'node:crypto'
import { ContractState } from '@midnight-ntwrk/ledger-v8'
import { decodeVaultState, encodeVaultState } from '../srv/chains/chain-b/vault-codec.ts'
import { emptyVaultState, type VaultState } from '../srv/chains/chain-b/vault.ts'
import { printLine, printRatio, printValue, sample } from './measure.ts'

/**
 * The vault's state as Midnight's serialized ContractState (what a contract action's `state`
 * carries, and the adapter reads on a verification after each write), at growing sizes: encoding
 * (the devnet, once per new state) and decoding (the adapter, once per new state; kept after),
 * against the same state as JSON text measured in the same run (the baseline: the form the
 * devnet served before). The decode's share spent in the ledger's own `ContractState.deserialize`
 * (measured on this thread) shows where a large state's time goes.
 */
export async function vaultStateBenchmarks({ sizes = [10, 100, 500, 1000] }: { sizes?: number[] } = {}) {
  console.log('\nthe vault state as a Midnight ContractState (codec thread), against JSON text of the same state')
  for (const size of sizes) {
    const state = anchors(size)
    const rounds = size >= 1000 ? 3 : size >= 500 ? 5 : 20
    let encoded = ''
    const encode = await sample(rounds, async () => (encoded = await encodeVaultState(state)))
    // A state decoded once is kept: each round decodes a state of its own (one more anchor).
    const variants = await Promise.all(Array.from({ length: rounds }, (_, i) => encodeVaultState(anchors(size, i + 1))))
    let round = 0
    const decode = await sample(rounds, () => decodeVaultState(variants[round++]))
    let parsed = 0
    const deserialize = await sample(rounds, async () => ContractState.deserialize(Buffer.from(variants[parsed++], 'hex')))
    const json = JSON.stringify(state)
    const jsonDecode = await sample(rounds, async () => JSON.parse(json))
    printValue(`${size} anchors: ContractState size`, `${(encoded.length / 2 / 1024).toFixed(1)} KiB (JSON ${(json.length / 1024).toFixed(1)} KiB)`)
    printLine(`${size} anchors: encode (devnet, once per new state)`, encode)
    printLine(`${size} anchors: decode (adapter, once per new state)`, decode)
    printLine(`${size} anchors: of which ContractState.deserialize`, deserialize)
    printRatio(`${size} anchors: decode against JSON.parse of the same state`, decode, jsonDecode)
  }
}

function anchors(size: number, extra = 0): VaultState {
  const state = emptyVaultState()
  const hash = (text: string) => createHash('sha256').update(text).digest('hex')
  for (let i = 0; i < size + extra; i++) {
    const attester = hash(`attester ${i % 7}`)
    state.documents[hash(`document ${i}`)] = { [attester]: { metadataHash: hash(`metadata ${i}`), attester, height: i, txHash: hash(`tx ${i}`) } }
  }
  return state
}

