import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parseValidator } from '../../srv/chains/chain-a/builders/request.ts'
import { runningDevnet } from '../support/chain-a.ts'
import { issueTestKey, ledgerOf, settled } from '../support/gateway.ts'
import { answerOf, connectToolServer, printedConfiguration, refusalOf, type ToolSession } from '../support/mcp.ts'
import { signWith, witnessSetOf } from '../support/sign.ts'

/**
 * The chain-A tool server, started from the configuration the gateway prints with a key, against
 * the devnet: a transfer from build to confirmation the way an agent does it (the signature made
 * as howToSign says, by the development signer's command, and the wait for its block followed by
 * progress notifications), a cancelled wait, a mint and the asset it made, a Plutus spend, entity
 * queries, a cardano-cli request, and refusals: bad arguments, unknown things, another key's build.
 */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

const run = promisify(execFile)

let devnet: ReturnType<typeof runningDevnet>
let session: ToolSession
const sessions: ToolSession[] = []
const keyIds: string[] = []

async function started(units: number) {
  const { id, key } = await issueTestKey({ units })
  keyIds.push(id)
  const connected = await connectToolServer(printedConfiguration('chain-a', key, app.url))
  sessions.push(connected)
  return connected
}

beforeAll(async () => {
  devnet = runningDevnet()
  session = await started(5000)
}, 60_000)
// The charges of a test's calls are committed right after their answers: before the database closes.
afterEach(() => Promise.all(keyIds.map(settled)))
afterAll(() => Promise.all(sessions.map(each => each.close())))

const wallet = (n: number) => devnet.walletKeys(`wallet-${n}`)
const keyHashOf = (key: CSL.PrivateKey) => key.to_public().hash().to_hex()
/** A well-formed devnet address nobody has used: its outputs are exactly what a test sends it. */
const freshAddress = () => CSL.EnterpriseAddress.new(0, CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_bytes(randomBytes(28)))).to_address().to_bech32()

test('a transfer the way an agent makes it: build, signing request, signed as howToSign says, verified, submitted, followed with progress to its block, then read', async () => {
  const sender = wallet(1)
  const recipient = freshAddress()
  const build = answerOf(await session.call('build_ada_transfer', { senderAddress: sender.address, recipientAddress: recipient, lovelaceAmount: '5000000' }))
  expect(build).toMatchObject({
    status: 'built', kind: 'ada', network: 'devnet', senderAddress: sender.address, recipientAddress: recipient, lovelaceAmount: '5000000',
    txHash: expect.stringMatching(/^[0-9a-f]{64}$/), fee: expect.stringMatching(/^\d+$/), unsignedTxCbor: expect.stringMatching(/^[0-9a-f]+$/),
    units: { charged: 10, left: expect.any(Number) },
  })
  expect(build.next).toContain(`create_signing_request with buildId ${build.ID}`)

  const request = answerOf(await session.call('create_signing_request', { buildId: build.ID, signerInfo: 'agent test' }))
  expect(request).toMatchObject({ status: 'pending', signerType: 'browser-wallet', signerInfo: 'agent test', txHash: build.txHash, unsignedTxCbor: build.unsignedTxCbor, units: { charged: 5 } })
  const { howToSign } = request
  expect(howToSign).toMatchObject({ txHash: build.txHash, unsignedTxCbor: build.unsignedTxCbor, cip30: expect.stringContaining('api.signTx(unsignedTxCbor, true)') })
  expect(howToSign.handBack).toContain(`submit_signed_transaction with signingRequestId ${request.ID}`)
  expect(howToSign.cardanoCli).toBeUndefined()
  expect(howToSign.devnetSigner.command).toBe(`npm --prefix '${cds.root}' run -s devnet -- sign --wallet <n> --tx ${build.unsignedTxCbor}`)

  // The development signer, run as the answer says, for test wallet 1 (the sender).
  const { stdout } = await run('sh', ['-c', howToSign.devnetSigner.command.replace('<n>', '1')])
  const signed = JSON.parse(stdout)
  expect(signed.txHash).toBe(build.txHash)

  const verification = answerOf(await session.call('verify_signature', { signingRequestId: request.ID, signedTxCbor: signed.witnessSetCbor }))
  expect(verification).toMatchObject({
    signingRequestId: request.ID, status: 'verified', valid: true, txHash: build.txHash, witnessCount: 1,
    signerKeyHashes: [keyHashOf(sender.payment)], missingSigners: [], invalidSignatures: [], problems: [], units: { charged: 5 },
  })
  expect(verification.next).toContain(`submit_signed_transaction with signingRequestId ${request.ID}`)

  const submission = answerOf(await session.call('submit_signed_transaction', { signingRequestId: request.ID }))
  expect(submission).toMatchObject({ txHash: build.txHash, status: 'submitted', build_ID: build.ID, units: { charged: 20 } })
  expect(submission.signedTxCbor).toBeUndefined()
  expect(submission.next).toContain(`get_submission_status with submissionId ${submission.ID}`)

  // The test devnet makes blocks on request only: one as soon as the first look has reported.
  const progress: { progress: number; total?: number; message?: string }[] = []
  const onprogress = (notification: typeof progress[number]) => {
    if (!progress.length) devnet.produceBlock()
    progress.push(notification)
  }
  const status = answerOf(await session.call('get_submission_status', { submissionId: submission.ID, waitSeconds: 60 }, { onprogress }))
  expect(status).toMatchObject({
    txHash: build.txHash, status: 'confirmed', confirmations: 1, final: true, submissionId: submission.ID, buildId: build.ID,
    blockHeight: devnet.ledger.tip.height, blockHash: expect.stringMatching(/^[0-9a-f]{64}$/),
  })
  expect(status.looks).toBeGreaterThanOrEqual(2)
  expect(progress).toHaveLength(status.looks - 1)
  expect(progress.map(each => each.progress)).toEqual(progress.map((_, i) => i + 1))
  expect(progress[0]).toMatchObject({ total: 31, message: expect.stringMatching(/^look 1: submitted, 0 confirmations/) })
  // One read of the submission, then 2 units a look.
  expect(status.units.charged).toBe(1 + 2 * status.looks)

  const transaction = answerOf(await session.call('get_transaction', { hash: build.txHash, includeInputsOutputs: true }))
  expect(transaction).toMatchObject({ hash: build.txHash, blockHeight: status.blockHeight, blockHash: status.blockHash, fee: build.fee, units: { charged: 1 } })
  expect(transaction.outputs).toEqual(expect.arrayContaining([expect.objectContaining({ address: recipient, lovelace: '5000000', assets: [] })]))
  expect(transaction.inputs.every((input: { address: string }) => input.address === sender.address)).toBe(true)
  expect(transaction.metadata).toEqual([])

  const utxos = answerOf(await session.call('get_utxos', { address: recipient }))
  expect(utxos).toMatchObject({ address: recipient, count: 1, totalLovelace: '5000000', units: { charged: 2 } })
  expect(utxos.utxos).toEqual([expect.objectContaining({ txHash: build.txHash, address: recipient, lovelace: '5000000' })])
}, 90_000)

test('a wait for confirmation stops when the client cancels it: no more looks are made (nor charged)', async () => {
  const sender = wallet(1)
  const build = answerOf(await session.call('build_ada_transfer', { senderAddress: sender.address, recipientAddress: freshAddress(), lovelaceAmount: '3000000' }))
  answerOf(await session.call('submit_signed_transaction', { signedTxCbor: signWith(build.unsignedTxCbor, sender.payment), buildId: build.ID }))
  const cancel = new AbortController()
  const waiting = session.client.callTool({ name: 'get_submission_status', arguments: { txHash: build.txHash, waitSeconds: 300 } }, undefined, {
    signal: cancel.signal, timeout: 60_000, onprogress: () => cancel.abort('enough'),
  })
  await expect(waiting).rejects.toThrow()
  await settled(keyIds[0])
  const charges = (await ledgerOf(keyIds[0])).length
  // The server would look every 2 s if it went on waiting.
  await new Promise(resolve => setTimeout(resolve, 4500))
  await settled(keyIds[0])
  expect((await ledgerOf(keyIds[0])).length).toBe(charges)
  devnet.produceBlock()
  expect(answerOf(await session.call('get_submission_status', { txHash: build.txHash }))).toMatchObject({ status: 'confirmed', looks: 1 })
}, 60_000)

test('build_mint_transaction mints under a signature policy; the signed transaction goes in without a request; get_asset_info reads the asset', async () => {
  const minter = wallet(2)
  const policy = { type: 'sig', keyHash: keyHashOf(minter.payment) }
  const policyId = CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(CSL.Ed25519KeyHash.from_hex(policy.keyHash))).hash().to_hex()
  const unit = policyId + Buffer.from('AgentCoin').toString('hex')
  const mint = answerOf(await session.call('build_mint_transaction', {
    senderAddress: minter.address,
    mintActionsJson: JSON.stringify([{ assetName: 'AgentCoin', quantity: '1000' }]),
    mintingPolicyScript: policy,
    metadataJson: { 721: { [policyId]: { AgentCoin: { name: 'Agent coin', image: 'ipfs://agent' } } } },
  }))
  expect(mint).toMatchObject({ status: 'built', kind: 'mint', units: { charged: 11 } })
  expect(mint.minted).toEqual([{ unit, policyId, assetNameHex: unit.slice(56), assetName: 'AgentCoin', fingerprint: expect.stringMatching(/^asset1/), quantity: '1000' }])

  const submission = answerOf(await session.call('submit_signed_transaction', { signedTxCbor: signWith(mint.unsignedTxCbor, minter.payment) }))
  expect(submission).toMatchObject({ txHash: mint.txHash, status: 'submitted', build_ID: mint.ID })
  devnet.produceBlock()
  const status = answerOf(await session.call('get_submission_status', { txHash: mint.txHash }))
  expect(status).toMatchObject({ status: 'confirmed', final: true, looks: 1, submissionId: submission.ID, units: { charged: 2 } })

  const asset = answerOf(await session.call('get_asset_info', { unit, includeHistory: true }))
  expect(asset).toMatchObject({
    unit, policyId, assetNameHex: unit.slice(56), assetName: 'AgentCoin', fingerprint: mint.minted[0].fingerprint, quantity: '1000',
    mintOrBurnCount: 1, initialMintTxHash: mint.txHash, units: { charged: 3 },
  })
  expect(asset.txHash).toBeUndefined()
  expect(asset.history).toEqual([expect.objectContaining({ txHash: mint.txHash, action: 'minted', amount: '1000' })])

  const held = answerOf(await session.call('get_utxos', { address: minter.address, includeAssets: true }))
  const withCoin = held.utxos.filter((utxo: { assets: { unit: string }[] }) => utxo.assets.some(each => each.unit === unit))
  expect(withCoin).toEqual([expect.objectContaining({ txHash: mint.txHash, assets: [expect.objectContaining({ unit, quantity: '1000', assetName: 'AgentCoin' })] })])
  expect(held.units.charged).toBe(3)

  // A burn is a mint of a negative quantity, under the same policy (given as JSON text this time).
  const burn = answerOf(await session.call('build_mint_transaction', { senderAddress: minter.address, mintActionsJson: [{ assetName: 'AgentCoin', quantity: '-400' }], mintingPolicyScript: JSON.stringify(policy) }))
  expect(burn.minted).toEqual([expect.objectContaining({ unit, quantity: '-400' })])
  answerOf(await session.call('submit_signed_transaction', { signedTxCbor: signWith(burn.unsignedTxCbor, minter.payment), buildId: burn.ID }))
  devnet.produceBlock()
  const left = answerOf(await session.call('get_utxos', { address: minter.address, includeAssets: true })).utxos
    .flatMap((utxo: { assets: { unit: string; quantity: string }[] }) => utxo.assets).filter((each: { unit: string }) => each.unit === unit)
  expect(left).toEqual([expect.objectContaining({ quantity: '600' })])
}, 60_000)

test('build_plutus_spend spends what build_ada_transfer locked at a Plutus V3 script: a wrong redeemer fails in the build, the datum as redeemer builds', async () => {
  const sender = wallet(3)
  const validator = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'plutus', 'redeemer-equals-datum.plutus.json'), 'utf8')).cborHex
  const scriptHash = CSL.ScriptHash.from_hex(parseValidator(validator, 'validatorScript').hash)
  const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(scriptHash)).to_address().to_bech32()
  const lock = answerOf(await session.call('build_ada_transfer', { senderAddress: sender.address, recipientAddress: scriptAddress, lovelaceAmount: '5000000', datumJson: { int: 42 } }))
  const submitted = answerOf(await session.call('submit_signed_transaction', { signedTxCbor: signWith(lock.unsignedTxCbor, sender.payment), buildId: lock.ID }))
  expect(submitted).toMatchObject({ txHash: lock.txHash, status: 'submitted', build_ID: lock.ID })
  devnet.produceBlock()

  const locked = answerOf(await session.call('get_utxos', { address: scriptAddress })).utxos.find((utxo: { txHash: string }) => utxo.txHash === lock.txHash)
  expect(locked).toMatchObject({ lovelace: '5000000', inlineDatum: expect.any(String) })
  const spend = { senderAddress: sender.address, validatorScript: validator, scriptTxHash: lock.txHash, scriptOutputIndex: locked.outputIndex }

  expect(refusalOf(await session.call('build_plutus_spend', { ...spend, redeemerJson: { int: 7 } }))).toMatch(/^Refused \(400 SCRIPT_FAILED: .*redeemer does not match datum/)
  const build = answerOf(await session.call('build_plutus_spend', { ...spend, redeemerJson: '{"int":42}' }))
  expect(build).toMatchObject({ status: 'built', kind: 'plutusSpend', senderAddress: sender.address, units: { charged: 10 } })
  expect(build.next).toContain(`create_signing_request with buildId ${build.ID}`)
}, 60_000)

test('query_entity reads an entity set with filter, select, orderby, top, skip, expand and count', async () => {
  devnet.produceBlock()
  const pools = answerOf(await session.call('query_entity', { entity: 'Pools', select: 'poolId,ticker', orderby: 'ticker desc', top: 2, count: true }))
  expect(pools).toMatchObject({ entity: 'Pools', count: devnet.ledger.pools.size, units: { charged: 1 } })
  expect(pools.rows).toEqual([{ poolId: expect.stringMatching(/^pool1/), ticker: 'DEVC' }, { poolId: expect.stringMatching(/^pool1/), ticker: 'DEVB' }])
  const second = answerOf(await session.call('query_entity', { entity: 'Pools', select: 'ticker', orderby: 'ticker desc', top: 1, skip: 1 }))
  expect(second.rows).toEqual([pools.rows[1]])
  expect(second.count).toBeUndefined()

  const tip = answerOf(await session.call('query_entity', { entity: 'Blocks', filter: `height ge 1`, orderby: 'height desc', top: 1, select: 'hash,height', expand: 'transactions($select=hash)' }))
  expect(tip.rows).toEqual([{ hash: devnet.ledger.tip.hash, height: devnet.ledger.tip.height, transactions: expect.any(Array) }])

  expect(refusalOf(await session.call('query_entity', { entity: 'Blocks', filter: 'nope eq 1' }))).toMatch(/^Refused \(400 UNKNOWN_PROPERTY: /)
  expect(refusalOf(await session.call('query_entity', { entity: 'Wallets' }))).toMatch(/entity/)
  expect(refusalOf(await session.call('query_entity', { entity: 'Blocks', top: 500 }))).toMatch(/top/)
}, 60_000)

test('a cardano-cli signing request carries the exact command and envelope; a signature by the wrong key is found wanting, the signed file of the right one verifies', async () => {
  const sender = wallet(4)
  const build = answerOf(await session.call('build_ada_transfer', { senderAddress: sender.address, recipientAddress: freshAddress(), lovelaceAmount: '2000000', builder: 'buildooor' }))
  expect(build.builder).toBe('buildooor')
  const request = answerOf(await session.call('create_signing_request', { buildId: build.ID, signerType: 'cardano-cli', expiresInSeconds: 600 }))
  expect(request).toMatchObject({ signerType: 'cardano-cli', status: 'pending' })
  expect(Date.parse(request.expiresAt) - Date.parse(request.createdAt)).toBe(600_000)
  const { cardanoCli } = request.howToSign
  expect(cardanoCli.command).toMatch(/^cardano-cli conway transaction sign --tx-file tx\.unsigned --signing-key-file payment\.skey --testnet-magic \d+ --out-file tx\.signed$/)
  expect(JSON.parse(cardanoCli.envelope)).toEqual({ type: 'Tx ConwayEra', description: 'Ledger Cddl Format', cborHex: build.unsignedTxCbor })
  expect(cardanoCli.script).toContain(cardanoCli.command)
  expect(request.howToSign.cip30).toBeUndefined()

  const wrong = answerOf(await session.call('verify_signature', { signingRequestId: request.ID, signedTxCbor: witnessSetOf(build.unsignedTxCbor, wallet(1).payment), signerType: 'cardano-cli' }))
  expect(wrong).toMatchObject({ valid: false, status: 'failed', signerKeyHashes: [keyHashOf(wallet(1).payment)] })
  expect(wrong.missingSigners).toEqual([expect.objectContaining({ keyHash: keyHashOf(sender.payment) })])
  expect(wrong.next).toMatch(/create_signing_request/)
  // As the answer says: a new request for the build, signed by the right key this time.
  const again = answerOf(await session.call('create_signing_request', { buildId: build.ID, signerType: 'cardano-cli' }))
  expect(again).toMatchObject({ status: 'pending', txHash: build.txHash })
  expect(again.ID).not.toBe(request.ID)
  const signedFile = JSON.stringify({ type: 'Tx ConwayEra', description: 'Ledger Cddl Format', cborHex: signWith(build.unsignedTxCbor, sender.payment) }, null, 4) + '\n'
  expect(answerOf(await session.call('verify_signature', { signingRequestId: again.ID, signedTxCbor: signedFile }))).toMatchObject({ valid: true, status: 'verified' })
  // Verified once: the same answer again changes nothing and says so.
  expect(refusalOf(await session.call('verify_signature', { signingRequestId: again.ID, signedTxCbor: signedFile }))).toMatch(/^Refused \(409 INVALID_REQUEST_STATE: .* is verified/)
}, 60_000)

test('bad arguments are refused before any call, nothing charged; unknown things and wrong networks by the service, in words', async () => {
  const before = answerOf(await session.call('query_entity', { entity: 'NetworkInformation' })).units.left - 0
  expect(refusalOf(await session.call('get_utxos', { address: 'not-an-address' }))).toMatch(/address.*bech32/)
  expect(refusalOf(await session.call('get_transaction', { hash: 'zz' }))).toMatch(/hash.*64 hexadecimal/)
  expect(refusalOf(await session.call('build_ada_transfer', { senderAddress: wallet(1).address, recipientAddress: wallet(2).address, lovelaceAmount: '5 ADA' }))).toMatch(/lovelaceAmount/)
  expect(refusalOf(await session.call('build_ada_transfer', { senderAddress: wallet(1).address, recipientAddress: wallet(2).address, lovelaceAmount: '1000000', datumJson: '{int: 4' }))).toBe('Invalid arguments for build_ada_transfer: datumJson is not valid JSON')
  expect(refusalOf(await session.call('submit_signed_transaction', {}))).toMatch(/^Invalid arguments for submit_signed_transaction: give signingRequestId/)
  expect(refusalOf(await session.call('get_submission_status', {}))).toMatch(/^Invalid arguments for get_submission_status: give submissionId or txHash/)
  expect(refusalOf(await session.call('get_asset_info', { unit: 'abc' }))).toMatch(/policy id/)
  expect(answerOf(await session.call('query_entity', { entity: 'NetworkInformation' })).units.left).toBe(before - 1)

  const mainnet = CSL.EnterpriseAddress.new(1, CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_hex('ef'.repeat(28)))).to_address().to_bech32()
  const wrongNetwork = refusalOf(await session.call('get_utxos', { address: mainnet }))
  expect(wrongNetwork).toMatch(/^Refused \(400 WRONG_NETWORK: /)
  expect(JSON.parse(wrongNetwork.split('\n')[1])).toMatchObject({ httpStatus: 400, code: 'WRONG_NETWORK' })
  expect(refusalOf(await session.call('get_transaction', { hash: 'ab'.repeat(32) }))).toMatch(/^Refused \(404 TRANSACTION_NOT_FOUND: /)
  expect(refusalOf(await session.call('get_asset_info', { unit: 'ab'.repeat(28) + '01' }))).toMatch(/^Refused \(404 ASSET_NOT_FOUND: /)
  expect(refusalOf(await session.call('get_submission_status', { txHash: 'cd'.repeat(32) }))).toMatch(/^Refused \(404 TRANSACTION_NOT_FOUND: /)
}, 60_000)

test('another key cannot see this key\'s build: a signing request for it is refused as not found', async () => {
  const build = answerOf(await session.call('build_ada_transfer', { senderAddress: wallet(4).address, recipientAddress: freshAddress(), lovelaceAmount: '1500000' }))
  const stranger = await started(100)
  expect(refusalOf(await stranger.call('create_signing_request', { buildId: build.ID }))).toMatch(/^Refused \(404 BUILD_NOT_FOUND: /)
  const theirs = answerOf(await stranger.call('query_entity', { entity: 'NetworkInformation' }))
  expect(theirs.units.left).toBe(99)
  // The owner still can.
  expect(answerOf(await session.call('create_signing_request', { buildId: build.ID }))).toMatchObject({ status: 'pending', txHash: build.txHash })
}, 60_000)
