import cds from '@sap/cds'
import { createHmac } from 'node:crypto'
import { chainBConfig, chainBEnabled, chainBSecrets, checkZkKeys, zkConfig, type ChainBConfig, type ChainBOptions, type ChainBSecrets } from './config.ts'
import { IndexerClient } from './indexer-client.ts'
import type { ChainBPort } from './port.ts'
import { ApiError } from '../../lib/errors.ts'
import { NewestVaultState } from './newest-vault-state.ts'
import { decodeVaultState, vaultDeployment, VaultStateUnreadable } from './vault-codec.ts'
import { seedBytes, vaultKeyFromSeed, type VaultKey, type VaultState } from './vault.ts'
import { ZeroKnowledge } from './zk/index.ts'

/** What a devnet faucet credits at once when the sponsor runs low (smallest DUST unit). */
const FAUCET_REFILL = '100000000000000000'

/**
 * The chain-B connector, `cds.requires['chain-b']` of kind `midnight-indexer` (the OData service
 * named ChainBService is srv/chainb's): the chain-B port over
 * the indexer client (the public Midnight indexer, or the devnet the bootstrap put into
 * `indexerUrl`), the attester identities (one ed25519 key per subject, derived from the attester
 * secret), the sponsor that pays every write's fee, and the zero-knowledge prover and verifier
 * with the circuits' keys (production refuses development keys unless told otherwise).
 */
export default class ChainBConnector extends cds.Service {
  declare options: ChainBOptions
  private adapter?: IndexerClient
  private secrets!: ChainBSecrets
  private sponsor?: VaultKey
  /** The circuits' keys, the prover pool and the verifier. */
  zk!: ZeroKnowledge
  private readonly vaultStates = new NewestVaultState(decodeVaultState)

  async init() {
    if (!this.options.vaultAddress && this.settings.network === 'devnet') this.options.vaultAddress = (await vaultDeployment(this.settings.devnetSeed)).address
    const settings = this.settings
    this.secrets = chainBSecrets(this.options)
    const zk = zkConfig(this.options)
    this.zk = new ZeroKnowledge(zk.keysDir, zk.provers)
    if (chainBEnabled()) checkZkKeys(zk, this.zk.manifest)
    cds.on('shutdown', () => this.zk.close())
    if (!chainBEnabled()) cds.log('chain-b').info('chain B is turned off (CHAIN_B_ENABLED=false): its routes answer 503 CHAIN_B_DISABLED')
    else cds.log('chain-b').info(`connect to chain-b > ${this.options.kind}`, { network: settings.network, indexer: settings.indexerUrl, vault: settings.vaultAddress })
    return super.init()
  }

  /** The options with their defaults; read anew from `this.options` each time. */
  get settings(): ChainBConfig {
    return chainBConfig(this.options)
  }

  get port(): ChainBPort {
    return this.client
  }

  /**
   * Whether this connector can put writes on the chain: only with a submission API
   * (CHAIN_B_SUBMIT_URL; a devnet has one, the public indexers have none).
   */
  get canSubmit(): boolean {
    return Boolean(this.settings.submitUrl)
  }

  private get client(): IndexerClient {
    return (this.adapter ??= new IndexerClient(this.settings))
  }

  /**
   * The attestation vault's current state, from the chain (503 CHAIN_B_UNAVAILABLE when it is not
   * deployed there). The state is fetched only when it changed since the one decoded last.
   */
  async vaultState(): Promise<VaultState> {
    const address = this.settings.vaultAddress
    const notDeployed = () => new ApiError(503, 'CHAIN_B_UNAVAILABLE', 'the attestation vault is not deployed on chain B')
    if (!address) throw notDeployed()
    const version = await this.port.contractStateVersion(address)
    if (!version) throw notDeployed()
    let decoded = this.vaultStates.kept(version)
    if (!decoded) {
      const action = await this.port.contractAction(address)
      if (!action) throw notDeployed()
      decoded = this.vaultStates.read(action.version, action.state)
    }
    return decoded.catch((error: Error) => {
      if (error instanceof VaultStateUnreadable) throw new ApiError(502, 'CHAIN_B_UPSTREAM_ERROR', `the attestation vault's state on chain B cannot be read: ${error.message}`)
      throw new ApiError(503, 'CHAIN_B_UNAVAILABLE', `the attestation vault's state could not be read now (${error.message}); try again`, { retryAfter: 1 })
    })
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
