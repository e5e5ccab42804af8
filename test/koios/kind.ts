import cds from '@sap/cds'
import { KoiosAdapter } from '../../srv/chains/chain-a/koios.ts'

/** The test that the file's tests did run on the Koios kind: the chain-a service's port is the Koios adapter. */
export function koiosKindInUse() {
  test('chain A was read through the Koios adapter', async () => {
    const chainA = (await cds.connect.to('chain-a')) as unknown as { port: unknown }
    expect(chainA.port).toBeInstanceOf(KoiosAdapter)
  })
}
