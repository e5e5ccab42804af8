import cds from '@sap/cds'
import { NetworkParametersCache } from '#cds-models/chainatx'
import type { ChainIdentity } from '#cds-models/ChainABuildSigning'
import { chainA } from '../chains/chain-a/index.ts'

/**
 * The chain the builds are made on: the network as recorded from the upstream's genesis when the
 * service started or first built (chain-context.ts), so records made for a build (signing requests,
 * verified transactions) carry the chain their build belongs to. Another chain forgets the builds.
 */

const { SELECT } = cds.ql

export async function chainIdentity(): Promise<ChainIdentity> {
  const network = chainA().networkName
  const known = await SELECT.one.from(NetworkParametersCache).columns('networkMagic', 'systemStart').where({ network })
  if (known?.systemStart) return { network, networkMagic: known.networkMagic ?? null, systemStart: new Date(known.systemStart).toISOString() }
  const genesis = await chainA().genesis()
  return { network, networkMagic: genesis.networkMagic, systemStart: new Date(genesis.systemStart * 1000).toISOString() }
}
