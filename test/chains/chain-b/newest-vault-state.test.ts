import { NewestVaultState } from '../../../srv/chains/chain-b/newest-vault-state.ts'
import type { VaultState } from '../../../srv/chains/chain-b/vault.ts'

/** A decoder that decodes when the test says so, and records what it was asked to decode. */
function heldDecoder() {
  const asked: { state: string; finish(): void; fail(error: Error): void }[] = []
  const decode = (state: string) => new Promise<VaultState>((resolve, reject) => {
    asked.push({ state, finish: () => resolve({ decodedFrom: state } as unknown as VaultState), fail: reject })
  })
  return { decode, asked, decodedStates: () => asked.map(entry => entry.state) }
}

const version = (transactionId: number, transactionHash = `tx-${transactionId}`) => ({ transactionId, transactionHash })
const settle = () => new Promise(resolve => setImmediate(resolve))

describe('the vault state, newest first', () => {
  it('decodes only the newest of the states found while one is being decoded, and answers each of their reads with it', async () => {
    const decoder = heldDecoder()
    const states = new NewestVaultState(decoder.decode)
    const first = states.read(version(1), 's1')
    const found = [states.read(version(2), 's2'), states.read(version(4), 's4'), states.read(version(3), 's3')]
    expect(decoder.decodedStates()).toEqual(['s1'])
    decoder.asked[0].finish()
    expect(await first).toEqual({ decodedFrom: 's1' })
    await settle()
    expect(decoder.decodedStates()).toEqual(['s1', 's4'])
    decoder.asked[1].finish()
    expect(await Promise.all(found)).toEqual([{ decodedFrom: 's4' }, { decodedFrom: 's4' }, { decodedFrom: 's4' }])
  })

  it('answers a read older than the state being decoded with that state', async () => {
    const decoder = heldDecoder()
    const states = new NewestVaultState(decoder.decode)
    const newer = states.read(version(5), 's5')
    const older = states.read(version(4), 's4')
    decoder.asked[0].finish()
    expect(await older).toBe(await newer)
    expect(decoder.decodedStates()).toEqual(['s5'])
  })

  it('keeps a decoded state for its very version only: after a reorg, a state of a smaller id or of another transaction is decoded', async () => {
    const decoder = heldDecoder()
    const states = new NewestVaultState(decoder.decode)
    const read = states.read(version(7), 's7')
    decoder.asked[0].finish()
    await read
    expect(states.kept(version(7))).toBe(read)
    expect(states.read(version(7), 's7')).toBe(read)
    expect(states.kept(version(7, 'another'))).toBeUndefined()
    const reorged = states.read(version(6, 'fork'), 's6')
    expect(decoder.decodedStates()).toEqual(['s7', 's6'])
    decoder.asked[1].finish()
    expect(await reorged).toEqual({ decodedFrom: 's6' })
    // The same id for another transaction (a devnet that replayed its chain reuses ids) waits for its own decoding.
    const running = states.read(version(8), 's8')
    const sameId = states.read(version(8, 'replayed'), 's8b')
    decoder.asked[2].finish()
    await running
    await settle()
    expect(decoder.decodedStates()).toEqual(['s7', 's6', 's8', 's8b'])
    decoder.asked[3].finish()
    expect(await sameId).toEqual({ decodedFrom: 's8b' })
  })

  it('does not keep a failed decoding: its reads fail, the waiting ones go on, and the next read of that version decodes again', async () => {
    const decoder = heldDecoder()
    const states = new NewestVaultState(decoder.decode)
    const failing = states.read(version(1), 's1')
    const waiting = states.read(version(2), 's2')
    decoder.asked[0].fail(new Error('the codec thread stopped'))
    await expect(failing).rejects.toThrow('the codec thread stopped')
    expect(states.kept(version(1))).toBeUndefined()
    await settle()
    decoder.asked[1].finish()
    expect(await waiting).toEqual({ decodedFrom: 's2' })
    const again = states.read(version(1), 's1')
    expect(decoder.decodedStates()).toEqual(['s1', 's2', 's1'])
    decoder.asked[2].finish()
    expect(await again).toEqual({ decodedFrom: 's1' })
  })
})
