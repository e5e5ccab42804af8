import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { BlockFrostAPI } from '@blockfrost/blockfrost-js'
import type { ChainADevnet } from '../devnet/chain-a/index.ts'
import { addVkeyWitnesses, bodyHashOf } from '../srv/chains/chain-a/signing/witnesses.ts'
import { verifySignedTransaction } from '../srv/chains/chain-a/signing/verify.ts'
import { figures, printLine, printRatio, printValue } from './measure.ts'

/**
 * Chain-A transactions against the devnet, per builder: build latency of a simple ADA transfer and
 * of a mint (through the transaction service), signature verification, and the time from submit
 * until GetTransactionStatus reports the transaction confirmed. Baselines from the same run:
 * EstimateFee (the same selection and build, nothing recorded, no locks), parsing the signed
 * transaction, and the same submission made directly against the devnet with blockfrost-js.
 */
export async function transactionBenchmarks({ url, devnet, direct, rounds }: { url: string; devnet: ChainADevnet; direct: BlockFrostAPI; rounds: number }) {
  const service = `${url}/odata/v4/chaina-transaction`
  const headers = { authorization: 'Basic ' + Buffer.from('alice:').toString('base64'), 'content-type': 'application/json' }
  const call = async (action: string, body: object) => {
    const response = await fetch(`${service}/${action}`, { method: 'POST', headers, body: JSON.stringify(body) })
    const data = await response.json()
    if (response.status >= 400) throw new Error(`${action} answered ${response.status}: ${JSON.stringify(data)}`)
    return data
  }
  const wallet = devnet.walletKeys('wallet-1')
  const recipient = devnet.wallets()[1].address
  const policy = JSON.stringify({ type: 'sig', keyHash: wallet.payment.to_public().hash().to_hex() })
  const samples = Math.min(rounds, 200)

  console.log(`chain-A transactions (devnet, ${samples} samples per figure)`)
  for (const builder of ['csl', 'buildooor']) {
    const timeBuild = async (action: string, body: object) => {
      const times: number[] = []
      for (let i = 0; i < samples; i++) {
        const started = performance.now()
        const build = await call(action, { ...body, builder })
        times.push(performance.now() - started)
        if (build.ID) await call('CancelBuild', { buildId: build.ID })
      }
      return figures(times)
    }
    const transfer = { senderAddress: wallet.address, recipientAddress: recipient, lovelaceAmount: '2000000' }
    const built = await timeBuild('BuildSimpleAdaTransaction', transfer)
    const estimated = await timeBuild('EstimateFee', transfer)
    printLine(`${builder}: build a simple ADA transfer`, built)
    printLine(`${builder}: EstimateFee, same transfer (nothing recorded)`, estimated)
    printRatio(`${builder}: build / estimate (recording, locks)`, built, estimated)
    printLine(`${builder}: build a token mint`, await timeBuild('BuildTokenMintTransaction', { senderAddress: wallet.address, mintActionsJson: JSON.stringify([{ assetName: 'Bench', quantity: '1' }]), mintingPolicyScript: policy }))
  }

  const build = await call('BuildSimpleAdaTransaction', { senderAddress: wallet.address, recipientAddress: recipient, lovelaceAmount: '2000000' })
  const signed = addVkeyWitnesses(build.unsignedTxCbor, [CSL.make_vkey_witness(CSL.TransactionHash.from_hex(bodyHashOf(build.unsignedTxCbor)), wallet.payment)]).cborHex
  const verifications: number[] = []
  const parses: number[] = []
  for (let i = 0; i < samples; i++) {
    let started = performance.now()
    await verifySignedTransaction(signed, { expectedBodyHash: build.txHash, inputOwners: () => wallet.address })
    verifications.push(performance.now() - started)
    started = performance.now()
    CSL.Transaction.from_hex(signed).free()
    parses.push(performance.now() - started)
  }
  printLine('verify a signed transfer (signatures, coverage)', figures(verifications))
  printLine('parse the same signed transaction (CSL)', figures(parses))
  printRatio('verify / parse', figures(verifications), figures(parses))
  await call('CancelBuild', { buildId: build.ID })

  const signedTransfer = async () => {
    const next = await call('BuildSimpleAdaTransaction', { senderAddress: wallet.address, recipientAddress: recipient, lovelaceAmount: '1500000' })
    return { next, cbor: addVkeyWitnesses(next.unsignedTxCbor, [CSL.make_vkey_witness(CSL.TransactionHash.from_hex(next.txHash), wallet.payment)]).cborHex }
  }
  const confirmations: number[] = []
  const directConfirmations: number[] = []
  for (let i = 0; i < 20; i++) {
    const { next, cbor } = await signedTransfer()
    let started = performance.now()
    await call('SubmitSignedTransaction', { signedTxCbor: cbor, buildId: next.ID })
    devnet.produceBlock()
    while ((await call('GetTransactionStatus', { txHash: next.txHash })).status !== 'confirmed');
    confirmations.push(performance.now() - started)

    const other = await signedTransfer()
    await call('CancelBuild', { buildId: other.next.ID })
    started = performance.now()
    await direct.txSubmit(other.cbor)
    devnet.produceBlock()
    await direct.txs(other.next.txHash)
    directConfirmations.push(performance.now() - started)
  }
  printLine('submit → block → GetTransactionStatus confirmed (20 transfers)', figures(confirmations))
  printLine('same directly with blockfrost-js (submit, block, /txs/{hash})', figures(directConfirmations))
  printRatio('service / direct', figures(confirmations), figures(directConfirmations))
  printValue('(on a running devnet add the wait for the next block: DEVNET_BLOCK_TIME_MS, 2 s by default)', '')
  console.log()
}
