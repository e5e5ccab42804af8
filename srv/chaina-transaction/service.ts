import cds from '@sap/cds'
import {
  BuildSimpleAdaTransaction, BuildMultiAssetTransaction, BuildTokenMintTransaction, BuildMetadataTransaction,
  BuildPlutusSpendTransaction, SubmitSignedTransaction, GetBuildStatus, GetTransactionStatus, CancelBuild, RebuildTransaction,
  EstimateFee, ValidateAddresses,
} from '#cds-models/ChainATransactionService'
import ChainABuildSigning from '#cds-models/ChainABuildSigning'
import { builderFor } from '../chains/chain-a/builders/index.ts'
import { CHAIN_CHANGED, chainA, type ChainChange } from '../chains/chain-a/index.ts'
import { addressNetworkId, decodeAddress, networkIdOf, networkMismatch } from '../chains/chain-a/csl.ts'
import { describeAddress } from '../chains/chain-a/identifiers.ts'
import { ownExpands } from '../lib/ownership.ts'
import { scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { buildNow, cancelBuild, createBuild, defaultBuilder, rebuild } from './builds.ts'
import { chainContext, forgetBuilds } from './chain-context.ts'
import { expireBuilds } from './expiry.ts'
import { planBuild } from './requests.ts'
import type { BuildKind } from './states.ts'
import { submitSigned, transactionStatus } from './submissions.ts'

export class ChainATransactionService extends cds.ApplicationService {
  /** The build expiry job, started once the services are served. */
  expiry?: ScheduledJob

  async init() {
    const chain = await chainA()
    this.before('READ', '*', ownExpands)
    this.serveBuilds()
    this.serveLifecycle()
    this.serveHelpers()
    chain.on(CHAIN_CHANGED, (msg: { data: ChainChange }) => forgetBuildsOfFormerChain(msg.data))
    cds.once('served', () => {
      this.expiry = scheduleJob('chain-A build expiry', chain.settings.expiryIntervalMs, expireBuilds)
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
      const builder = builderFor(req.data.builder || (await defaultBuilder()))
      const context = await chainContext()
      const kind: BuildKind = req.data.assetsJson ? 'multiAsset' : 'ada'
      const plan = planBuild(kind, req.data, context.network)
      const built = await builder.build({
        utxos: await (await chainA()).port.addressUtxos(plan.sender), changeAddress: plan.change, protocolParameters: context.protocolParameters,
        currentSlot: context.currentSlot, networkId: context.networkId, slotConfig: context.slotConfig, outputs: plan.outputs, metadataJson: req.data.metadataJson ?? undefined,
      })
      return { fee: built.fee, size: built.size, inputCount: built.inputs.length, builder: built.builder }
    })
    this.on(ValidateAddresses, async req => {
      const { networkName } = await chainA()
      return (req.data.addresses ?? []).map(address => validateAddress(address, networkName))
    })
  }
}

/**
 * The upstream serves another chain than the builds were made on: builds, locks and submissions
 * are removed, and the signing service hears of it (BuildsForgotten, with the chain builds are made
 * on now) when a former chain was known.
 */
async function forgetBuildsOfFormerChain({ previous, current }: ChainChange) {
  await cds.tx(() => forgetBuilds())
  if (!previous) return
  cds.log('chaina-transaction').warn('the upstream is another chain now: builds, locks and submissions of the former one were removed')
  const signing = await cds.connect.to(ChainABuildSigning)
  await cds.tx({ user: cds.User.privileged }, () => signing.emit('BuildsForgotten', current))
}

function validateAddress(text: string | null, networkName: string) {
  const address = String(text ?? '')
  const decoded = decodeAddress(address)
  if (!decoded) return { address, valid: false, network: null, type: null, isScript: null, usable: false, errorCode: 'INVALID_ADDRESS', message: 'Not a Cardano address' }
  const mismatch = networkMismatch(decoded, address, networkIdOf(networkName))
  return {
    address, valid: true, network: addressNetworkId(decoded) === 1 ? 'mainnet' : 'testnet', ...describeAddress(address), usable: !mismatch,
    errorCode: mismatch?.code ?? null, message: mismatch?.message ?? null,
  }
}
