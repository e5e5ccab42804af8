// test/chaina-odata/actions.test.ts on the Ogmios kind (Ogmios with Kupo): the same tests, chain A read through the devnet's Ogmios and Kupo (docs/chain-a-backends.md).
import '../chaina-odata/actions.test.ts'
import { ogmiosKindInUse } from './kind.ts'

process.env.CHAIN_A_KIND = 'ogmios'
afterAll(() => {
  delete process.env.CHAIN_A_KIND
})
ogmiosKindInUse()
