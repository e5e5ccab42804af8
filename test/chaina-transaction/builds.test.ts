import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith } from '../support/sign.ts'
import { parseValidator } from '../../srv/chains/chain-a/builders/request.ts'

const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const TX = '/odata/v4/chaina-transaction'
const READ = '/odata/v4/chaina-odata'
let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-1')
  other = devnet.wallets()[1].address
})

/** Signs a build with the sender's key, submits it, lets the devnet make a block, answers the status. */
async function signSubmitConfirm(build: any, ...keys: CSL.PrivateKey[]) {
  const signed = signWith(build.unsignedTxCbor, ...(keys.length ? keys : [wallet.payment]))
  const submission = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signed, buildId: build.ID })
  expect(submission.data).toMatchObject({ txHash: build.txHash, status: 'submitted' })
  devnet.produceBlock()
  const status = await POST(`${TX}/GetTransactionStatus`, { txHash: build.txHash })
  expect(status.data).toMatchObject({ txHash: build.txHash, status: 'confirmed', confirmations: 1, buildId: build.ID })
  const onChain = await GET(`${READ}/Transactions('${build.txHash}')`)
  expect(onChain.status).toBe(200)
  expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('confirmed')
  return build.txHash
}

describe.each(['csl', 'buildooor'])('the %s builder', builder => {
  test('BuildSimpleAdaTransaction: built, signed, submitted, confirmed, readable', async () => {
    const build = await POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: other, lovelaceAmount: '2500000', builder })
    expect(build.data).toMatchObject({ status: 'built', kind: 'ada', builder, senderAddress: wallet.address, recipientAddress: other, txHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    const details = await GET(`${TX}/TransactionBuilds(${build.data.ID})?$expand=inputs,outputs`)
    expect(details.data.outputs.find((o: any) => !o.isChange)).toMatchObject({ address: other, lovelace: '2500000' })
    await signSubmitConfirm(build.data)
    const received = await GET(`${READ}/TransactionOutputs?$filter=txHash eq '${build.data.txHash}' and address eq '${other}'`)
    expect(received.data.value[0].lovelace).toBe('2500000')
  })

  test('BuildTokenMintTransaction (signature policy with CIP-25), then BuildMultiAssetTransaction of the minted token', async () => {
    const keyHash = wallet.payment.to_public().hash().to_hex()
    const policy = JSON.stringify({ type: 'sig', keyHash })
    const policyId = CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(CSL.Ed25519KeyHash.from_hex(keyHash))).hash().to_hex()
    const name = `Coin${builder}`
    const metadataJson = JSON.stringify({ 721: { [policyId]: { [name]: { name, image: 'ipfs://coin' } } } })
    const mint = await POST(`${TX}/BuildTokenMintTransaction`, { senderAddress: wallet.address, mintActionsJson: JSON.stringify([{ assetName: name, quantity: '1000' }]), mintingPolicyScript: policy, metadataJson, builder })
    expect(mint.data).toMatchObject({ status: 'built', kind: 'mint' })
    await signSubmitConfirm(mint.data)
    const unit = policyId + Buffer.from(name).toString('hex')
    const asset = (await POST(`${READ}/GetAssetHistory`, { unit })).data.value[0]
    expect(asset).toMatchObject({ txHash: mint.data.txHash, action: 'minted', amount: '1000' })

    const transfer = await POST(`${TX}/BuildMultiAssetTransaction`, { senderAddress: wallet.address, recipientAddress: other, assetsJson: JSON.stringify([{ unit, quantity: '40' }]), builder })
    expect(transfer.data.kind).toBe('multiAsset')
    await signSubmitConfirm(transfer.data)
    const held = await POST(`${READ}/GetAssetsByAddress`, { address: other })
    expect(held.data.value.find((a: any) => a.unit === unit).quantity).toBe('40')
  })

  test('BuildTokenMintTransaction under a time-locked policy', async () => {
    const keyHash = wallet.payment.to_public().hash().to_hex()
    const policy = JSON.stringify({ type: 'all', scripts: [{ type: 'sig', keyHash }, { type: 'before', slot: devnet.ledger.tip.slot + 100_000 }] })
    const mint = await POST(`${TX}/BuildTokenMintTransaction`, { senderAddress: wallet.address, mintActionsJson: JSON.stringify([{ assetName: 'Timed', quantity: '5' }]), mintingPolicyScript: policy, builder })
    expect(Number(mint.data.invalidHereafter)).toBeLessThanOrEqual(devnet.ledger.tip.slot + 100_000)
    await signSubmitConfirm(mint.data)
  })

  test('BuildMetadataTransaction with a CIP-20 message and an arbitrary label', async () => {
    const message = 'a message long enough to be split into more than one chunk of at most sixty-four bytes each'
    const build = await POST(`${TX}/BuildMetadataTransaction`, { senderAddress: wallet.address, message, metadataJson: JSON.stringify({ 1337: { note: 'hello' } }), builder })
    await signSubmitConfirm(build.data)
    const metadata = await POST(`${READ}/GetMetadataByTxHash`, { tx_hash: build.data.txHash })
    const labels = Object.fromEntries(metadata.data.value.map((m: any) => [m.label, JSON.parse(m.payload)]))
    expect(labels['674'].msg.join('')).toBe(message)
    expect(labels['674'].msg.length).toBeGreaterThan(1)
    expect(labels['1337']).toEqual({ note: 'hello' })
  })

  test('BuildPlutusSpendTransaction: funds locked at a Plutus V3 script are spent with the right redeemer', async () => {
    const validator = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'plutus', 'redeemer-equals-datum.plutus.json'), 'utf8')).cborHex
    const scriptHash = CSL.ScriptHash.from_hex(parseValidator(validator, 'validatorScript').hash)
    const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(scriptHash)).to_address().to_bech32()
    const datum = JSON.stringify({ int: 42 })
    const lock = await POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: scriptAddress, lovelaceAmount: '5000000', datumJson: datum, builder })
    await signSubmitConfirm(lock.data)
    const lockedIndex = (await GET(`${TX}/BuildOutputs?$filter=build_ID eq ${lock.data.ID} and address eq '${scriptAddress}'`)).data.value[0].outputIndex

    const wrong = await POST(`${TX}/BuildPlutusSpendTransaction`, { senderAddress: wallet.address, validatorScript: validator, scriptTxHash: lock.data.txHash, scriptOutputIndex: lockedIndex, redeemerJson: JSON.stringify({ int: 7 }), builder })
    expect(wrong.data.error.code).toBe('SCRIPT_FAILED')
    expect(wrong.status).toBe(400)

    const spend = await POST(`${TX}/BuildPlutusSpendTransaction`, { senderAddress: wallet.address, validatorScript: validator, scriptTxHash: lock.data.txHash, scriptOutputIndex: lockedIndex, redeemerJson: datum, builder })
    expect(spend.data).toMatchObject({ status: 'built', kind: 'plutusSpend' })
    await signSubmitConfirm(spend.data)
  })
})
