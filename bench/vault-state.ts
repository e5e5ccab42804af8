import { createHash } from 'node:crypto'
import { ContractState } from '@midnight-ntwrk/ledger-v8'
import { NewestVaultState } from '../srv/chains/chain-b/newest-vault-state.ts'
import { decodeVaultState, encodeVaultState } from '../srv/chains/chain-b/vault-codec.ts'
import { emptyVaultState, type VaultState } from '../srv/chains/chain-b/vault.ts'
import { figures, printLine, printRatio, printValue, sample } from './measure.ts'

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

/**
 * Reads while the vault changes faster than it decodes: `found` reads, each finding a newer state
 * while the first is being decoded (a write every block, a decoding longer than a block). The
 * baseline decodes every state found, in turn; the service decodes the newest only
 * (newest-vault-state.ts). Figures: the time until every read is answered, and the decodings made.
 */
export async function vaultStateUnderWritesBenchmarks({ size = 500, found = 8, rounds = 3 } = {}) {
  console.log(`\nreads of the vault while it changes faster than it decodes (${size} anchors, ${found} newer states found during one decoding)`)
  let variant = 0
  let decodings = 0
  const timed = async (read: (states: string[]) => Promise<unknown>) => {
    const times: number[] = []
    for (let round = 0; round < rounds; round++) {
      // New states each round (a decoded state is kept), encoded before the clock starts.
      const states = await Promise.all(Array.from({ length: found }, () => encodeVaultState(anchors(size, 0, `found ${variant++}`))))
      const started = performance.now()
      await read(states)
      times.push(performance.now() - started)
    }
    return figures(times)
  }
  const everyState = await timed(states => Promise.all(states.map(state => decodeVaultState(state))))
  const newestOnly = await timed(states => {
    const newest = new NewestVaultState(state => (decodings++, decodeVaultState(state)))
    return Promise.all(states.map((state, i) => newest.read({ transactionId: i, transactionHash: String(i) }, state)))
  })
  printLine(`all answered, each state decoded in turn (${found} decodings)`, everyState)
  printLine(`all answered, the newest decoded (${decodings / rounds} decodings)`, newestOnly)
  printRatio('the newest decoded against each in turn', newestOnly, everyState)
}

function anchors(size: number, extra = 0, salt = ''): VaultState {
  const state = emptyVaultState()
  const hash = (text: string) => createHash('sha256').update(text).digest('hex')
  for (let i = 0; i < size + extra; i++) {
    const attester = hash(`attester ${i % 7}`)
    state.documents[hash(`document ${i}${salt}`)] = { [attester]: { metadataHash: hash(`metadata ${i}`), attester, height: i, txHash: hash(`tx ${i}`) } }
  }
  return state
}

