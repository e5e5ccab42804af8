import cds from '@sap/cds'
import { OgmiosAdapter } from '../../srv/chains/chain-a/ogmios.ts'

/** The test that the file's tests did run on the ogmios kind: the chain-a service's port is the Ogmios adapter. */
export function ogmiosKindInUse() {
  test('chain A was read through the Ogmios adapter', async () => {
    const chainA = (await cds.connect.to('chain-a')) as unknown as { port: unknown }
    expect(chainA.port).toBeInstanceOf(OgmiosAdapter)
  })
}
