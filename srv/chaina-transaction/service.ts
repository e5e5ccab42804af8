import cds from '@sap/cds'
import {
  TransactionBuilds, BuildSimpleAdaTransaction, BuildMultiAssetTransaction, BuildTokenMintTransaction, BuildMetadataTransaction,
  BuildPlutusSpendTransaction, SubmitSignedTransaction, GetBuildStatus, GetTransactionStatus, CancelBuild, RebuildTransaction,
  EstimateFee, ValidateAddresses,
} from '#cds-models/ChainATransactionService'
import { builderFor } from '../chains/chain-a/builders/index.ts'
import { chainA } from '../chains/chain-a/index.ts'
import { describeAddress, networkIdOf } from '../chains/chain-a/identifiers.ts'
import { notFound } from '../lib/errors.ts'
import { ownExpands, ownedBy } from '../lib/ownership.ts'
import { cancelBuild, createBuild, defaultBuilder, expireStaleBuilds, rebuild } from './builds.ts'
import { chainContext, forgetBuildsOfAnotherChain } from './chain-context.ts'
import { planBuild, type BuildKind } from './requests.ts'
import { submitSigned, transactionStatus } from './submissions.ts'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'

const { SELECT } = cds.ql

export class ChainATransactionService extends cds.ApplicationService {
  init() {
    this.before('READ', '*', ownExpands)
    this.before('READ', TransactionBuilds, () => expireStaleBuilds())
    this.serveBuilds()
    this.serveLifecycle()
    this.serveHelpers()
    cds.once('served', () => this.forgetBuildsOfAnotherChainOnStart())
    return super.init()
  }

  private serveBuilds() {
    const build = (kind: BuildKind) => async (req: cds.Request) => buildRow(await createBuild(kind, req.data, req.data.builder))
    this.on(BuildSimpleAdaTransaction, build('ada'))
    this.on(BuildMultiAssetTransaction, build('multiAsset'))
    this.on(BuildTokenMintTransaction, build('mint'))
    this.on(BuildMetadataTransaction, build('metadata'))
    this.on(BuildPlutusSpendTransaction, build('plutusSpend'))
    this.on(RebuildTransaction, async req => buildRow(await rebuild(req.data.buildId!, req.data.builder)))
  }

  private serveLifecycle() {
    this.on(SubmitSignedTransaction, req => submitSigned(this, req, req.data.signedTxCbor, req.data.buildId))
    this.on(GetTransactionStatus, req => transactionStatus(this, req.data.txHash))
    this.on(GetBuildStatus, async req => {
      await expireStaleBuilds()
      return buildRow(req.data.buildId!)
    })
    this.on(CancelBuild, async req => {
      await expireStaleBuilds()
      await cancelBuild(req.data.buildId!)
      return buildRow(req.data.buildId!)
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

  /** Builds, locks and submissions made on another chain than the upstream's now are removed. */
  private async forgetBuildsOfAnotherChainOnStart() {
    try {
      if (!(await cds.tx(() => forgetBuildsOfAnotherChain()))) return
      cds.log('chaina-transaction').warn('the upstream is another chain now: builds, locks and submissions of the former one were removed')
      await cds.tx({ user: cds.User.privileged }, () => this.emit('BuildsForgotten', { network: chainA().networkName }))
    } catch (error) {
      cds.log('chaina-transaction').warn('could not check the upstream chain at start; builds stay as they are', error)
    }
  }
}


/** A build of the caller's (any for an operator); another owner's answers 404 like one that does not exist. */
async function buildRow(id: string) {
  const row = await SELECT.one.from(TransactionBuilds).where({ ID: id, ...ownedBy() })
  if (!row) throw notFound('BUILD_NOT_FOUND', `There is no build ${id}`, 'buildId')
  return row
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
