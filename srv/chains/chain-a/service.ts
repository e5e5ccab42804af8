import cds from '@sap/cds'
import { BlockfrostAdapter } from './blockfrost.ts'
import { KoiosAdapter } from './koios.ts'
import { OgmiosAdapter } from './ogmios.ts'
import { chainAConfig, chainAEnabled, type ChainAConfig, type ChainAOptions } from './config.ts'
import { ChainContext, type ChainChange, type ChainIdentity } from './context.ts'
import type { ChainAPort, ChainGenesis, ChainProtocolParameters } from './port.ts'

/** Raised with a ChainChange when the upstream turns out to serve another chain than the recorded one. */
export const CHAIN_CHANGED = 'chain-changed'

function adapterOf(settings: ChainAConfig): ChainAPort {
  if (settings.kind === 'koios') return new KoiosAdapter(settings)
  if (settings.kind === 'ogmios') return new OgmiosAdapter(settings)
  return new BlockfrostAdapter(settings)
}

/** The upstream named in the start log, without credentials a URL may carry. */
function upstreamShown(settings: ChainAConfig): string {
  if (settings.kind === 'koios') return settings.koiosUrl ? withoutUserinfo(settings.koiosUrl) : 'hosted Koios'
  if (settings.kind === 'ogmios') return `${settings.ogmiosUrl ? withoutUserinfo(settings.ogmiosUrl) : 'no OGMIOS_URL'} with Kupo at ${settings.kupoUrl ? withoutUserinfo(settings.kupoUrl) : 'no KUPO_URL'}`
  return settings.url ? withoutUserinfo(settings.url) : 'hosted Blockfrost'
}

const withoutUserinfo = (url: string) => url.replace(/\/\/[^/@]*@/, '//***@')

/** Seconds before the check of the upstream's chain is tried again after a failure at start. */
const RECHECK_SECONDS = [5, 15, 60]

/**
 * The chain-a service, `cds.requires['chain-a']` of kind `blockfrost`, `koios` or `ogmios`: the
 * chain-A port over that kind's adapter (the hosted service, a server of one's own, or the embedded
 * devnet, which speaks every kind's API, put into `credentials` by the bootstrap), with the chain's
 * facts (genesis, protocol parameters, identity) held once for every service. Once the services are served it checks which chain the
 * upstream serves, and raises CHAIN_CHANGED when that is not the recorded one.
 */
export default class ChainAService extends cds.Service {
  declare options: ChainAOptions
  /** preprod, preview, mainnet or devnet. */
  networkName!: string
  private facts!: ChainContext
  private adapter?: ChainAPort
  private recheck?: NodeJS.Timeout

  init() {
    const settings = this.settings
    this.networkName = settings.network
    // The kind is `silent`: CAP's connect log would print credentials.projectId, which it does not take for a secret.
    this.facts = new ChainContext(() => this.port, settings.network, settings.ttlSeconds.parameters * 1000)
    if (!chainAEnabled()) {
      cds.log('chain-a').info('chain A is turned off (CHAIN_A_ENABLED=false): its routes answer 503 CHAIN_A_DISABLED')
      return super.init()
    }
    cds.log('chain-a').info(`connect to chain-a > ${settings.kind}`, { network: settings.network, url: upstreamShown(settings) })
    cds.once('served', () => this.checkUpstreamAtStart())
    cds.once('shutdown', () => {
      clearTimeout(this.recheck)
      if (this.adapter instanceof OgmiosAdapter) void this.adapter.close()
    })
    return super.init()
  }

  /** The options with their defaults; read anew from `this.options` each time. */
  get settings(): ChainAConfig {
    return chainAConfig(this.options)
  }

  /** The chain-A port. An upstream that is not configured answers 503 UPSTREAM_NOT_CONFIGURED on use, not at start. */
  get port(): ChainAPort {
    const settings = this.settings
    return (this.adapter ??= adapterOf(settings))
  }

  genesis(): Promise<ChainGenesis> {
    return this.facts.genesis()
  }

  protocolParameters(): Promise<ChainProtocolParameters> {
    return this.facts.protocolParameters()
  }

  /** The chain records are made on now. */
  identity(): Promise<ChainIdentity> {
    return this.facts.identity()
  }

  /**
   * Checks which chain the upstream serves. When it is not the recorded one, CHAIN_CHANGED is raised
   * (and its handlers awaited) before the new chain is recorded, so a failed reaction is tried again
   * at the next check. Answers the change, if there was one.
   */
  async verifyUpstream(): Promise<ChainChange | undefined> {
    const { genesis, change } = await this.facts.compare()
    if (!change) return undefined
    await this.emit(CHAIN_CHANGED, change)
    await this.facts.record(genesis)
    return change
  }

  private async checkUpstreamAtStart(attempt = 0): Promise<void> {
    try {
      await this.verifyUpstream()
    } catch (error) {
      const seconds = RECHECK_SECONDS[Math.min(attempt, RECHECK_SECONDS.length - 1)]
      cds.log('chain-a').warn(`could not check which chain the upstream serves; records stay as they are, next check in ${seconds} s:`, error)
      this.recheck = setTimeout(() => this.checkUpstreamAtStart(attempt + 1), seconds * 1000).unref()
    }
  }
}
