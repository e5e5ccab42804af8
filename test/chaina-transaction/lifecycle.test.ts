import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith } from '../support/sign.ts'

const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const TX = '/odata/v4/chaina-transaction'
let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-2')
  other = devnet.wallets()[0].address
})

const send = (lovelaceAmount = '2000000', senderAddress = wallet.address) =>
  POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress, recipientAddress: other, lovelaceAmount })
const spentBy = async (buildId: string) =>
  (await GET(`${TX}/BuildInputs?$filter=build_ID eq ${buildId}&$select=txHash,outputIndex`)).data.value.map((i: any) => `${i.txHash}#${i.outputIndex}`)

describe('build states', () => {
  test('a built build can be cancelled once; its outputs are free again', async () => {
    const build = (await send()).data
    const cancelled = await POST(`${TX}/CancelBuild`, { buildId: build.ID })
    expect(cancelled.data.status).toBe('cancelled')
    const again = await POST(`${TX}/CancelBuild`, { buildId: build.ID })
    expect(again.data.error).toMatchObject({ code: 'INVALID_BUILD_STATE', target: 'buildId' })
    expect(again.status).toBe(409)
    const next = (await send()).data
    expect(await spentBy(next.ID)).toEqual(await spentBy(build.ID))
  })

  test('an expired build is reported expired and can be rebuilt with new inputs and validity', async () => {
    const build = (await send()).data
    const { TransactionBuilds } = cds.entities('chainatx')
    await cds.tx(() => UPDATE(TransactionBuilds, build.ID).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }))
    const status = await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })
    expect(status.data.status).toBe('expired')
    const rebuilt = await POST(`${TX}/RebuildTransaction`, { buildId: build.ID, builder: 'buildooor' })
    expect(rebuilt.data).toMatchObject({ status: 'built', rebuiltFrom: build.ID, builder: 'buildooor', recipientAddress: other, lovelaceAmount: '2000000' })
    expect(rebuilt.data.txHash).not.toBe(build.txHash)
  })

  test('only a failed or expired build can be rebuilt; a submitted one cannot be cancelled', async () => {
    const build = (await send()).data
    const rebuild = await POST(`${TX}/RebuildTransaction`, { buildId: build.ID })
    expect(rebuild.data.error.code).toBe('INVALID_BUILD_STATE')
    await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signWith(build.unsignedTxCbor, wallet.payment), buildId: build.ID })
    const cancel = await POST(`${TX}/CancelBuild`, { buildId: build.ID })
    expect(cancel.data.error.code).toBe('INVALID_BUILD_STATE')
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('submitted')
    devnet.produceBlock()
  })

  test('an unknown build answers 404 BUILD_NOT_FOUND', async () => {
    const response = await POST(`${TX}/GetBuildStatus`, { buildId: cds.utils.uuid() })
    expect(response.data.error.code).toBe('BUILD_NOT_FOUND')
    expect(response.status).toBe(404)
  })
})

describe('no double selection between pending builds of one address', () => {
  test('concurrent builds spend disjoint outputs', async () => {
    const wallet3 = devnet.walletKeys('wallet-3')
    const builds: { status: number; data: any }[] = await Promise.all(Array.from({ length: 4 }, () => send('1500000', wallet3.address)))
    const ok = builds.filter(b => b.status === 201 || b.status === 200).map(b => b.data)
    expect(ok.length).toBeGreaterThan(0)
    const spent = (await Promise.all(ok.map((b: any) => spentBy(b.ID)))).flat()
    expect(new Set(spent).size).toBe(spent.length)
    for (const b of builds.filter(b => b.status >= 400)) expect(['INSUFFICIENT_FUNDS', 'UTXO_CONTENTION']).toContain(b.data.error.code)
  })
})

describe('submission', () => {
  test('a second submission of the same transaction answers 409 TX_ALREADY_SUBMITTED', async () => {
    const build = (await send()).data
    const signed = signWith(build.unsignedTxCbor, wallet.payment)
    expect((await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signed, buildId: build.ID })).status).toBeLessThan(300)
    const again = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signed })
    expect(again.data.error.code).toBe('TX_ALREADY_SUBMITTED')
    expect(again.status).toBe(409)
    devnet.produceBlock()
  })

  test('a transaction the ledger rejects answers 400 TX_REJECTED with its reason; submission and build record the failure', async () => {
    const build = (await send()).data
    const unsigned = build.unsignedTxCbor
    const response = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: unsigned, buildId: build.ID })
    expect(response.data.error).toMatchObject({ code: 'TX_REJECTED', message: expect.stringContaining('MissingVKeyWitnessesUTXOW') })
    expect(response.status).toBe(400)
    const submission = (await GET(`${TX}/TransactionSubmissions?$filter=txHash eq '${build.txHash}'`)).data.value[0]
    expect(submission).toMatchObject({ status: 'failed', errorCode: 'TX_REJECTED', errorMessage: expect.stringContaining('MissingVKeyWitnessesUTXOW') })
    const status = await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })
    expect(status.data).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('MissingVKeyWitnessesUTXOW') })
    const rebuilt = await POST(`${TX}/RebuildTransaction`, { buildId: build.ID })
    expect(rebuilt.data.status).toBe('built')
  })

  test('a signed transaction whose body differs from the build answers 400 BODY_HASH_MISMATCH', async () => {
    const wallet4 = devnet.walletKeys('wallet-4')
    const first = (await send('1100000', wallet4.address)).data
    const second = (await send('1200000', wallet4.address)).data
    const response = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signWith(second.unsignedTxCbor, wallet4.payment), buildId: first.ID })
    expect(response.data.error.code).toBe('BODY_HASH_MISMATCH')
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: first.ID })).data.status).toBe('built')
  })

  test('malformed CBOR answers 400 MALFORMED_CBOR', async () => {
    const response = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: 'not-cbor' })
    expect(response.data.error.code).toBe('MALFORMED_CBOR')
    expect(response.status).toBe(400)
  })

  test('GetTransactionStatus of a transaction neither on chain nor submitted answers 404', async () => {
    const response = await POST(`${TX}/GetTransactionStatus`, { txHash: 'ab'.repeat(32) })
    expect(response.data.error.code).toBe('TRANSACTION_NOT_FOUND')
  })
})

describe('entity sets and helpers', () => {
  test('builds, inputs, outputs, assets, metadata, submissions and the parameter caches answer the query options', async () => {
    await send()
    for (const set of ['TransactionBuilds', 'BuildInputs', 'BuildOutputs', 'TransactionSubmissions', 'ProtocolParametersCache', 'NetworkParametersCache']) {
      const response = await GET(`${TX}/${set}?$top=2&$skip=0&$count=true`)
      expect([set, response.status]).toEqual([set, 200])
      expect(response.data['@odata.count']).toBeGreaterThan(0)
    }
    for (const set of ['BuildAssets', 'BuildMetadata']) expect((await GET(`${TX}/${set}?$top=1&$count=true`)).status).toBe(200)
    const network = (await GET(`${TX}/NetworkParametersCache`)).data.value[0]
    expect(network).toMatchObject({ network: 'devnet', networkId: 0, networkMagic: 42 })
  })

  test('EstimateFee answers a fee without recording a build', async () => {
    const before = (await GET(`${TX}/TransactionBuilds?$count=true&$top=0`)).data['@odata.count']
    const estimate = await POST(`${TX}/EstimateFee`, { senderAddress: wallet.address, recipientAddress: other, lovelaceAmount: '3000000' })
    expect(BigInt(estimate.data.fee)).toBeGreaterThan(155381n)
    expect(estimate.data).toMatchObject({ builder: 'csl', inputCount: expect.any(Number), size: expect.any(Number) })
    expect((await GET(`${TX}/TransactionBuilds?$count=true&$top=0`)).data['@odata.count']).toBe(before)
  })

  test('ValidateAddresses tells valid, foreign-network and malformed addresses apart', async () => {
    const mainnet = CSL.EnterpriseAddress.new(1, CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_hex('ab'.repeat(28)))).to_address().to_bech32()
    const response = await POST(`${TX}/ValidateAddresses`, { addresses: [other, mainnet, 'addr_test1nope'] })
    expect(response.data.value).toEqual([
      expect.objectContaining({ address: other, valid: true, network: 'testnet', type: 'base', usable: true }),
      expect.objectContaining({ address: mainnet, valid: true, network: 'mainnet', usable: false, errorCode: 'WRONG_NETWORK' }),
      expect.objectContaining({ address: 'addr_test1nope', valid: false, errorCode: 'INVALID_ADDRESS' }),
    ])
  })
})

describe('the read service after a submission', () => {
  test('shows spent and created outputs at once, not after its cache TTL', async () => {
    const wallet4 = devnet.walletKeys('wallet-4')
    const READ = '/odata/v4/chaina-odata'
    const before = (await POST(`${READ}/GetUTxOsByAddress`, { address: wallet4.address })).data.value.map((u: any) => `${u.txHash}#${u.outputIndex}`)
    const build = (await send('1300000', wallet4.address)).data
    const spent = await spentBy(build.ID)
    await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signWith(build.unsignedTxCbor, wallet4.payment), buildId: build.ID })
    devnet.produceBlock()
    expect((await POST(`${TX}/GetTransactionStatus`, { txHash: build.txHash })).data.status).toBe('confirmed')
    const after = (await POST(`${READ}/GetUTxOsByAddress`, { address: wallet4.address })).data.value.map((u: any) => `${u.txHash}#${u.outputIndex}`)
    expect(before).toEqual(expect.arrayContaining(spent))
    for (const ref of spent) expect(after).not.toContain(ref)
    expect(after.some((ref: string) => ref.startsWith(build.txHash))).toBe(true)
  })
})
