// test/chaina-sign/flows.test.ts on the Koios kind: the same tests, chain A read through Koios's API of the devnet (docs/chain-a-backends.md).
import '../chaina-sign/flows.test.ts'
import { koiosKindInUse } from './kind.ts'

process.env.CHAIN_A_KIND = 'koios'
afterAll(() => {
  delete process.env.CHAIN_A_KIND
})
koiosKindInUse()
