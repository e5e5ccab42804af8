import cds from '@sap/cds'
import { createHmac } from 'node:crypto'
import { chainBConfig, chainBSecrets, type ChainBConfig, type ChainBOptions, type ChainBSecrets } from './config.ts'
import { IndexerClient } from './indexer-client.ts'
import type { ChainBPort } from './port.ts'
import { seedBytes, vaultKeyFromSeed, type VaultKey } from './vault.ts'

/** What a devnet faucet credits at once when the sponsor runs low (smallest DUST unit). */
const FAUCET_REFILL = '100000000000000000'

/**
 * The chain-b service, `cds.requires['chain-b']` of kind `midnight-indexer`: the chain-B port over
 * the indexer client (the public Midnight indexer, or the devnet the bootstrap put into
 * `indexerUrl`), the attester identities (one ed25519 key per subject, derived from the attester
 * secret) and the sponsor that pays every write's fee.
 */
export default class ChainBService extends cds.Service {
  declare options: ChainBOptions
  private adapter?: IndexerClient
  private secrets!: ChainBSecrets
  private sponsor?: VaultKey

  init() {
    const settings = this.settings
    this.secrets = chainBSecrets(this.options)
    cds.log('chain-b').info(`connect to chain-b > ${this.options.kind}`, { network: settings.network, indexer: settings.indexerUrl, vault: settings.vaultAddress })
    return super.init()
  }

  /** The options with their defaults; read anew from `this.options` each time. */
  get settings(): ChainBConfig {
    return chainBConfig(this.options)
  }

  get port(): ChainBPort {
    return this.client
  }

  private get client(): IndexerClient {
    return (this.adapter ??= new IndexerClient(this.settings))
  }

  /** The attester key of a subject (a grant id, a user id): ed25519 seed = HMAC-SHA256(attesterSecret, 'attester:' + subject). */
  attesterKey(subject: string): VaultKey {
    if (!subject) throw new Error('an attester key needs a subject')
    return vaultKeyFromSeed(createHmac('sha256', this.secrets.attesterSecret).update('attester:' + subject).digest())
  }

  /** The sponsor that pays the fees of every write, from CHAIN_B_SPONSOR_SEED. */
  sponsorKey(): VaultKey {
    return (this.sponsor ??= vaultKeyFromSeed(seedBytes(this.secrets.sponsorSeed)))
  }

  /**
   * Makes sure the sponsor can pay: on a devnet the faucet refills it when it is below
   * CHAIN_B_SPONSOR_MIN_BALANCE; elsewhere (no faucet) it only reports a low balance.
   */
  async ensureSponsorFunded(): Promise<void> {
    const { network, sponsorMinBalance, submitUrl } = this.settings
    if (!submitUrl) return
    const key = this.sponsorKey().publicKey
    const balance = BigInt(await this.client.sponsorBalance(key))
    if (balance >= sponsorMinBalance) return
    if (network !== 'devnet') {
      cds.log('chain-b').warn(`the chain-B sponsor ${key} is low on DUST: ${balance} (below ${sponsorMinBalance})`)
      return
    }
    await this.client.fundSponsor(key, FAUCET_REFILL)
  }
}
