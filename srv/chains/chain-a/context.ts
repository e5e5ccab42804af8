import cds from '@sap/cds'
import ChainAChainRecords, { NetworkParametersCache } from '#cds-models/ChainAChainRecords'
import { ApiError } from '../../lib/errors.ts'
import { networkIdOf } from './csl.ts'
import type { ChainAPort, ChainGenesis, ChainProtocolParameters } from './port.ts'

/**
 * The one place that knows which chain the upstream serves: its genesis (fetched once), its
 * protocol parameters (fetched again after their TTL) and its identity. Each fetch is recorded in
 * NetworkParametersCache / ProtocolParametersCache, which the transaction service owns: it reads and
 * records them through its internal service ChainAChainRecords. The
 * recorded genesis is the chain this deployment's records are made on; `compare` tells when the
 * upstream serves another one (a restarted devnet, another network).
 */

const { SELECT } = cds.ql

/** The transaction service's records of the chain, joining the caller's transaction. */
const records = () => cds.connect.to(ChainAChainRecords)

/** Which chain: a restarted devnet or another network is another chain. `systemStart` is an ISO timestamp. */
export interface ChainIdentity {
  network: string
  networkMagic: number
  systemStart: string
}

/** The upstream serves another chain than the recorded one (none recorded: `previous` is null). */
export interface ChainChange {
  previous: ChainIdentity | null
  current: ChainIdentity
}

const identityOf = (network: string, genesis: ChainGenesis): ChainIdentity => ({
  network, networkMagic: genesis.networkMagic, systemStart: new Date(genesis.systemStart * 1000).toISOString(),
})

const sameChain = (a: ChainIdentity, b: ChainIdentity) =>
  a.network === b.network && a.networkMagic === b.networkMagic && Date.parse(a.systemStart) === Date.parse(b.systemStart)

type Recorded = { network?: string | null; networkMagic?: number | null; systemStart?: string | null }

const recordedIdentity = (row: Recorded | null | undefined): ChainIdentity | null =>
  row?.network && row.systemStart && typeof row.networkMagic === 'number'
    ? { network: row.network, networkMagic: row.networkMagic, systemStart: new Date(row.systemStart).toISOString() }
    : null

export class ChainContext {
  private readonly port: () => ChainAPort
  private readonly network: string
  private readonly parametersTtlMs: number
  private genesisOnce?: Promise<ChainGenesis>
  private parameters?: { value: Promise<ChainProtocolParameters>; at: number }

  constructor(port: () => ChainAPort, network: string, parametersTtlMs: number) {
    this.port = port
    this.network = network
    this.parametersTtlMs = parametersTtlMs
  }

  /** The upstream's genesis, fetched once (again after a failure). */
  genesis(): Promise<ChainGenesis> {
    if (!this.genesisOnce) {
      const fetching = this.port().genesis()
      this.genesisOnce = fetching
      fetching.catch(() => {
        if (this.genesisOnce === fetching) this.genesisOnce = undefined
      })
    }
    return this.genesisOnce
  }

  /**
   * The latest protocol parameters, fetched again once their TTL has passed. Concurrent callers
   * share one fetch; the caller that made it records it, in its own transaction (a shared promise
   * holding a database write could wait for a connection another caller holds while it waits).
   */
  async protocolParameters(): Promise<ChainProtocolParameters> {
    if (this.parameters && Date.now() - this.parameters.at < this.parametersTtlMs) return this.parameters.value
    const fetching = this.fetchParameters()
    this.parameters = { value: fetching, at: Date.now() }
    fetching.catch(() => {
      if (this.parameters?.value === fetching) this.parameters = undefined
    })
    const value = await fetching
    await recordParameters(value)
    return value
  }

  /** The chain records are made on: the recorded one for this network, else the upstream's. */
  async identity(): Promise<ChainIdentity> {
    const row = await (await records()).run(SELECT.one.from(NetworkParametersCache).columns('network', 'networkMagic', 'systemStart').where({ network: this.network })) as Recorded | undefined
    return recordedIdentity(row) ?? identityOf(this.network, await this.genesis())
  }

  /**
   * Asks the upstream for its genesis anew and compares it with the recorded one. Answers the
   * genesis, and the change when the upstream serves another chain (or none is recorded yet); the
   * genesis and parameters held here are the upstream's from now on.
   */
  async compare(): Promise<{ genesis: ChainGenesis; change?: ChainChange }> {
    const genesis = await this.port().genesis()
    const previous = recordedIdentity(await cds.tx(async () => (await records()).run(SELECT.one.from(NetworkParametersCache).orderBy('fetchedAt desc'))))
    const current = identityOf(this.network, genesis)
    this.genesisOnce = Promise.resolve(genesis)
    if (previous && sameChain(previous, current)) return { genesis }
    this.parameters = undefined
    return { genesis, change: { previous, current } }
  }

  /** Records the genesis as the chain records are made on from now on (the only one recorded). */
  async record(genesis: ChainGenesis): Promise<void> {
    const chain = {
      network: this.network, networkId: networkIdOf(this.network), networkMagic: genesis.networkMagic,
      systemStart: new Date(genesis.systemStart * 1000).toISOString(), slotLength: genesis.slotLength, epochLength: genesis.epochLength,
      securityParam: genesis.securityParam, fetchedAt: new Date().toISOString(),
    }
    await cds.tx(async () => (await records()).RecordChain({ chain }))
  }

  private async fetchParameters(): Promise<ChainProtocolParameters> {
    const value = await this.port().protocolParameters()
    if (!value) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream has no protocol parameters')
    return value
  }
}

async function recordParameters(value: ChainProtocolParameters): Promise<void> {
  const parameters = {
    epoch: value.epoch, minFeeA: value.minFeeA, minFeeB: value.minFeeB, maxTxSize: value.maxTxSize, coinsPerUtxoSize: value.coinsPerUtxoSize,
    keyDeposit: value.keyDeposit, priceMem: value.priceMem, priceStep: value.priceStep,
    maxTxExMem: value.maxTxExMem === null ? null : Number(value.maxTxExMem), maxTxExSteps: value.maxTxExSteps === null ? null : Number(value.maxTxExSteps),
    collateralPercent: value.collateralPercent, maxCollateralInputs: value.maxCollateralInputs, costModels: value.costModels, fetchedAt: new Date().toISOString(),
  }
  await (await records()).RecordProtocolParameters({ parameters })
}
