// test/e2e/quickstart.test.ts on the Koios kind: the same tests, chain A read through Koios's API of the devnet (docs/chain-a-backends.md).
import '../e2e/quickstart.test.ts'

process.env.CHAIN_A_KIND = 'koios'
afterAll(() => {
  delete process.env.CHAIN_A_KIND
})
