import cds from '@sap/cds'
import {
  BuildSimpleAdaTransaction, BuildMultiAssetTransaction, BuildTokenMintTransaction, BuildMetadataTransaction,
  BuildPlutusSpendTransaction, SubmitSignedTransaction, GetBuildStatus, GetTransactionStatus, CancelBuild, RebuildTransaction,
  EstimateFee, ValidateAddresses,
} from '#cds-models/ChainATransactionService'
import ChainABuildSigning from '#cds-models/ChainABuildSigning'
import { builderFor } from '../chains/chain-a/builders/index.ts'
import { chainA } from '../chains/chain-a/index.ts'
import { describeAddress, networkIdOf } from '../chains/chain-a/identifiers.ts'
import { ownExpands } from '../lib/ownership.ts'
import { expiryIntervalMs, scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { buildNow, cancelBuild, createBuild, defaultBuilder, rebuild } from './builds.ts'
import { chainContext, forgetBuildsOfAnotherChain } from './chain-context.ts'
import { chainIdentity } from './chain-identity.ts'
import { expireBuilds } from './expiry.ts'
import { planBuild } from './requests.ts'
import type { BuildKind } from './states.ts'
import { submitSigned, transactionStatus } from './submissions.ts'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'

export class ChainATransactionService extends cds.ApplicationService {
  /** The build expiry job, started once the services are served. */
  expiry?: ScheduledJob

  init() {
    this.before('READ', '*', ownExpands)
    this.serveBuilds()
    this.serveLifecycle()
    this.serveHelpers()
    cds.once('served', async () => {
      await this.forgetBuildsOfAnotherChainOnStart()
      this.expiry = scheduleJob('chain-A build expiry', expiryIntervalMs(), expireBuilds)
    })
    return super.init()
  }

  private serveBuilds() {
    const build = (kind: BuildKind) => async (req: cds.Request) => buildNow(await createBuild(kind, req.data, req.data.builder))
    this.on(BuildSimpleAdaTransaction, build('ada'))
    this.on(BuildMultiAssetTransaction, build('multiAsset'))
    this.on(BuildTokenMintTransaction, build('mint'))
    this.on(BuildMetadataTransaction, build('metadata'))
    this.on(BuildPlutusSpendTransaction, build('plutusSpend'))
    this.on(RebuildTransaction, async req => buildNow(await rebuild(req.data.buildId!, req.data.builder)))
  }

  private serveLifecycle() {
    this.on(SubmitSignedTransaction, req => submitSigned(this, req, req.data.signedTxCbor, req.data.buildId))
    this.on(GetTransactionStatus, req => transactionStatus(this, req.data.txHash))
    this.on(GetBuildStatus, req => buildNow(req.data.buildId!))
    this.on(CancelBuild, async req => {
      await cancelBuild(req.data.buildId!)
      return buildNow(req.data.buildId!)
    })
  }

  private serveHelpers() {
    this.on(EstimateFee, async req => {
      const builder = builderFor(req.data.builder || defaultBuilder())
      const context = await chainContext()
      const kind: BuildKind = req.data.assetsJson ? 'multiAsset' : 'ada'
      const plan = planBuild(kind, req.data, context.network)
      const built = await builder.build({
        utxos: await chainA().addressUtxos(plan.sender), changeAddress: plan.change, protocolParameters: context.protocolParameters,
        currentSlot: context.currentSlot, networkId: context.networkId, slotConfig: context.slotConfig, outputs: plan.outputs, metadataJson: req.data.metadataJson ?? undefined,
      })
      return { fee: built.fee, size: built.size, inputCount: built.inputs.length, builder: built.builder }
    })
    this.on(ValidateAddresses, req => (req.data.addresses ?? []).map(validateAddress))
  }

  /**
   * Builds, locks and submissions made on another chain than the upstream's now are removed; the
   * signing service hears of it (BuildsForgotten, with the chain the builds are made on now).
   */
  private async forgetBuildsOfAnotherChainOnStart() {
    try {
      if (!(await cds.tx(() => forgetBuildsOfAnotherChain()))) return
      cds.log('chaina-transaction').warn('the upstream is another chain now: builds, locks and submissions of the former one were removed')
      const signing = await cds.connect.to(ChainABuildSigning)
      await cds.tx({ user: cds.User.privileged }, async () => signing.emit('BuildsForgotten', await chainIdentity()))
    } catch (error) {
      cds.log('chaina-transaction').warn('could not check the upstream chain at start; builds stay as they are', error)
    }
  }
}

function validateAddress(text: string | null) {
  const address = String(text ?? '')
  try {
    const decoded = CSL.Address.from_bech32(address)
    const network = decoded.network_id() === 1 ? 'mainnet' : 'testnet'
    const usable = decoded.network_id() === networkIdOf(chainA().networkName)
    return {
      address, valid: true, network, ...describeAddress(address), usable,
      errorCode: usable ? null : 'WRONG_NETWORK', message: usable ? null : `A ${network} address; this deployment serves ${chainA().networkName}`,
    }
  } catch {
    return { address, valid: false, network: null, type: null, isScript: null, usable: false, errorCode: 'INVALID_ADDRESS', message: 'Not a bech32 Cardano address' }
  }
}
