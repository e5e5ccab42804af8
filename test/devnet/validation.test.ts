import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { ADA, buildTx, getJson, largestUtxo, signaturePolicy, startDevnet, submitHttp, unitOf } from '../support/devnet.ts'

/** Every ledger rule rejects a transaction that breaks exactly that rule; valid ones land on chain. */

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair

beforeAll(async () => {
  devnet = await startDevnet()
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  for (let i = 0; i < 3; i++) devnet.produceBlock()
})
afterAll(() => devnet.stop())

const transfer = (overrides: Partial<Parameters<typeof buildTx>[0]> = {}) =>
  buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 5n * ADA }], signers: [w1.payment], ...overrides })

async function expectRejected(cbor: Uint8Array, reason: RegExp) {
  const { status, body } = await submitHttp(devnet, cbor)
  expect({ status, body }).toEqual({ status: 400, body: { status_code: 400, error: 'Bad Request', message: expect.stringMatching(reason) } })
  expect(devnet.ledger.mempoolTransactions()).toHaveLength(0)
}

async function acceptAndInclude(cbor: Uint8Array): Promise<string> {
  const { status, body: hash } = await submitHttp(devnet, cbor)
  expect(status).toBe(200)
  expect(hash).toMatch(/^[0-9a-f]{64}$/)
  const block = devnet.produceBlock()
  expect(block.txs).toContain(hash)
  return hash
}

describe('rejections', () => {
  it('DeserialiseFailure for bytes that are not a transaction', async () => {
    await expectRejected(new Uint8Array([0xff, 0x00, 0x13]), /^DeserialiseFailure: /)
  })

  it('DeserialiseFailure for a transaction nested too deeply for CSL, which goes on working', async () => {
    const valid = transfer()
    const hex = Buffer.from(valid).toString('hex')
    expect(hex.endsWith('f6')).toBe(true)
    // The same transaction with auxiliary data whose metadata nests 6000 lists deep.
    const deep = Buffer.from(hex.slice(0, -2) + 'a1' + '01' + '81'.repeat(6000) + '00', 'hex')
    await expectRejected(deep, /^DeserialiseFailure: .*nesting too deep/)
    await acceptAndInclude(valid)
  })

  it('BadInputsUTxO for an input that does not exist', async () => {
    const ghost = { ...largestUtxo(devnet, w1.address), txHash: 'ab'.repeat(32), index: 7 }
    await expectRejected(transfer({ inputs: [ghost] }), new RegExp(`^BadInputsUTxO: input ${'ab'.repeat(32)}#7 does not exist or is already spent$`))
  })

  it('BadInputsUTxO for an input already spent by a mempool transaction', async () => {
    const input = largestUtxo(devnet, w1.address)
    const first = transfer({ inputs: [input] })
    const second = transfer({ inputs: [input], outputs: [{ address: w2.address, coin: 7n * ADA }] })
    expect((await submitHttp(devnet, first)).status).toBe(200)
    const { status, body } = await submitHttp(devnet, second)
    expect(status).toBe(400)
    expect(body.message).toBe(`BadInputsUTxO: input ${input.ref} does not exist or is already spent`)
    devnet.produceBlock()
  })

  it('MissingVKeyWitnessesUTXOW when the input owner did not sign', async () => {
    await expectRejected(transfer({ signers: [w2.payment] }), new RegExp(`^MissingVKeyWitnessesUTXOW: missing signature of key hash ${w1.payment.to_public().hash().to_hex()}$`))
  })

  it('MissingVKeyWitnessesUTXOW for a required signer that did not sign', async () => {
    const hash = w2.payment.to_public().hash().to_hex()
    await expectRejected(transfer({ requiredSigners: [hash] }), new RegExp(`missing signature of key hash ${hash}`))
  })

  it('InvalidWitnessesUTXOW when a signature does not match the body', async () => {
    const fixed = CSL.FixedTransaction.from_bytes(transfer())
    const forged = CSL.Vkeywitnesses.new()
    forged.add(CSL.Vkeywitness.new(CSL.Vkey.new(w1.payment.to_public()), w1.payment.sign(Buffer.from('another body'))))
    const witnesses = CSL.TransactionWitnessSet.new()
    witnesses.set_vkeys(forged)
    fixed.set_witness_set(witnesses.to_bytes())
    await expectRejected(fixed.to_bytes(), new RegExp(`^InvalidWitnessesUTXOW: the signature of key ${w1.payment.to_public().hash().to_hex()} does not verify against the transaction body$`))
  })

  it('FeeTooSmallUTxO when the fee is below min_fee_a × size + min_fee_b', async () => {
    const cbor = transfer({ fee: 1000n })
    await expectRejected(cbor, new RegExp(`^FeeTooSmallUTxO: fee 1000 is below the minimum ${44 * cbor.length + 155381}$`))
  })

  it('ValueNotConservedUTxO when outputs and fee do not add up to the inputs', async () => {
    await expectRejected(transfer({ changeDelta: 1n }), /^ValueNotConservedUTxO: consumed \d+ lovelace, produced \d+ lovelace$/)
  })

  it('OutsideValidityIntervalUTxO for an expired or not-yet-valid transaction', async () => {
    await expectRejected(transfer({ ttl: 1 }), /^OutsideValidityIntervalUTxO: current slot \d+ is not before invalid_hereafter 1$/)
    await expectRejected(transfer({ validFrom: 10_000_000 }), /^OutsideValidityIntervalUTxO: current slot \d+ is before invalid_before 10000000$/)
  })

  it('BabbageOutputTooSmallUTxO for an output below the minimum ADA', async () => {
    const output = CSL.TransactionOutput.new(CSL.Address.from_bech32(w2.address), CSL.Value.new(CSL.BigNum.from_str('100000')))
    const needed = CSL.min_ada_for_output(output, CSL.DataCost.new_coins_per_byte(CSL.BigNum.from_str('4310'))).to_str()
    await expectRejected(transfer({ outputs: [{ address: w2.address, coin: 100_000n }] }), new RegExp(`^BabbageOutputTooSmallUTxO: output 0 holds 100000 lovelace, needs at least ${needed}$`))
  })

  it('WrongNetwork for an output to a mainnet address', async () => {
    const mainnet = CSL.BaseAddress.new(1, CSL.Credential.from_keyhash(w2.payment.to_public().hash()), CSL.Credential.from_keyhash(w2.stake.to_public().hash())).to_address().to_bech32()
    await expectRejected(transfer({ outputs: [{ address: mainnet, coin: 5n * ADA }] }), /^WrongNetwork: output 0 pays to an address of network 1, expected 0$/)
  })

  it('MaxTxSizeUTxO for a transaction above max_tx_size', async () => {
    const padding = Array.from({ length: 300 }, (_, i) => `${i}`.padEnd(64, '.'))
    await expectRejected(transfer({ metadata: { 1: padding } }), /^MaxTxSizeUTxO: transaction size \d+ exceeds the maximum 16384$/)
  })

  it('MissingScriptWitnessesUTXOW when a minting policy script is not provided', async () => {
    const policy = signaturePolicy(w1.payment)
    await expectRejected(transfer({ mint: [{ policy, name: 'Ghost', quantity: 1n }], scripts: [] }), new RegExp(`^MissingScriptWitnessesUTXOW: no script witness for script hash ${policy.hash().to_hex()}$`))
  })

  it('ScriptWitnessNotValidatingUTXOW when the policy key did not sign', async () => {
    const policy = signaturePolicy(w2.payment)
    await expectRejected(transfer({ mint: [{ policy, name: 'Unsigned', quantity: 1n }] }), new RegExp(`^ScriptWitnessNotValidatingUTXOW: native script ${policy.hash().to_hex()} is not satisfied`))
  })

  it('ScriptWitnessNotValidatingUTXOW when a time-locked policy has expired', async () => {
    const scripts = CSL.NativeScripts.new()
    scripts.add(signaturePolicy(w1.payment))
    scripts.add(CSL.NativeScript.new_timelock_expiry(CSL.TimelockExpiry.new_timelockexpiry(CSL.BigNum.from_str('2'))))
    const policy = CSL.NativeScript.new_script_all(CSL.ScriptAll.new(scripts))
    await expectRejected(transfer({ mint: [{ policy, name: 'Late', quantity: 1n }], ttl: 100_000 }), /^ScriptWitnessNotValidatingUTXOW: /)
  })

  it('MissingTxBodyMetadataHash when auxiliary data is not committed to by the body', async () => {
    await expectRejected(transfer({ metadata: { 674: { msg: ['hi'] } }, omitAuxiliaryDataHash: true }), /^MissingTxBodyMetadataHash: /)
  })

  it('StakeKeyRegisteredDELEG when registering a stake key that is already registered', async () => {
    const cert = CSL.Certificate.new_stake_registration(CSL.StakeRegistration.new(CSL.Credential.from_keyhash(w1.stake.to_public().hash())))
    await expectRejected(transfer({ certificates: [cert], deposits: 2n * ADA }), new RegExp(`^StakeKeyRegisteredDELEG: stake credential ${w1.stakeAddress} is already registered$`))
  })

  it('WithdrawalsNotInRewardsCERTS when a withdrawal does not drain the reward balance', async () => {
    await expectRejected(transfer({ withdrawals: [{ stakeAddress: w1.stakeAddress, amount: 5n * ADA }], signers: [w1.payment, w1.stake] }), /^WithdrawalsNotInRewardsCERTS: withdrawal of 5000000 from stake_test1\w+ does not match its reward balance 0$/)
  })

  it('DuplicateTransaction for a transaction already in the mempool or on chain', async () => {
    const cbor = transfer()
    const hash = (await submitHttp(devnet, cbor)).body
    expect((await submitHttp(devnet, cbor)).body.message).toBe(`DuplicateTransaction: transaction ${hash} is already in the mempool`)
    devnet.produceBlock()
    await expectRejected(cbor, new RegExp(`^DuplicateTransaction: transaction ${hash} is already on chain$`))
  })

  it('refuses a body that is not CBOR-typed (415) or too large (413)', async () => {
    expect(await submitHttp(devnet, transfer(), 'application/json')).toMatchObject({ status: 415, body: { status_code: 415 } })
    expect(await submitHttp(devnet, new Uint8Array(70_000))).toMatchObject({ status: 413, body: { status_code: 413, error: 'Request Entity Too Large' } })
  })

  it('gives in-process submissions the same verdict as HTTP', () => {
    expect(() => devnet.submit(transfer({ fee: 1000n }))).toThrow(/^FeeTooSmallUTxO: /)
  })
})

describe('accepted transactions', () => {
  it('a transfer moves value between the wallets and is readable over HTTP', async () => {
    const input = largestUtxo(devnet, w1.address)
    const hash = await acceptAndInclude(transfer({ inputs: [input], outputs: [{ address: w2.address, coin: 12n * ADA }] }))

    const utxos = (await getJson(devnet, `/addresses/${w2.address}/utxos?order=desc`)).body
    expect(utxos[0]).toMatchObject({ tx_hash: hash, output_index: 0, amount: [{ unit: 'lovelace', quantity: '12000000' }] })
    const senderUtxos = (await getJson(devnet, `/addresses/${w1.address}/utxos`)).body
    expect(senderUtxos.map((u: any) => `${u.tx_hash}#${u.output_index}`)).not.toContain(input.ref)

    const tx = (await getJson(devnet, `/txs/${hash}`)).body
    expect(tx).toMatchObject({ hash, block_height: devnet.ledger.tip.height, utxo_count: 3, valid_contract: true })
    const spent = (await getJson(devnet, `/txs/${input.txHash}/utxos`)).body
    expect(spent.outputs[input.index].consumed_by_tx).toBe(hash)
    expect((await getJson(devnet, `/txs/${hash}/cbor`)).body.cbor).toMatch(/^84/)
  })

  it('transactions may spend outputs of transactions still in the mempool', async () => {
    const first = buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w1.address, coin: 30n * ADA }], signers: [w1.payment] })
    const firstHash = devnet.submit(first)
    const pendingOutput = { ...devnet.ledger.pendingView.output(`${firstHash}#0`)!, txHash: firstHash, index: 0, blockHash: '', spentBy: null }
    const second = devnet.submit(buildTx({ inputs: [pendingOutput], outputs: [{ address: w2.address, coin: 10n * ADA }], signers: [w1.payment] }))
    const block = devnet.produceBlock()
    expect(block.txs).toEqual([firstHash, second])
  })

  let nft: string
  it('a mint with CIP-25 metadata creates an asset with on-chain metadata', async () => {
    const policy = signaturePolicy(w1.payment)
    nft = unitOf(policy, 'DevnetCat')
    const cip25 = { [policy.hash().to_hex()]: { DevnetCat: { name: 'Devnet Cat', image: 'ipfs://cat', mediaType: 'image/png' } }, version: '1.0' }
    const hash = await acceptAndInclude(transfer({ outputs: [], mint: [{ policy, name: 'DevnetCat', quantity: 10n }], metadata: { 721: cip25 } }))

    const asset = (await getJson(devnet, `/assets/${nft}`)).body
    expect(asset).toMatchObject({ asset: nft, quantity: '10', initial_mint_tx_hash: hash, mint_or_burn_count: 1, onchain_metadata: { name: 'Devnet Cat', image: 'ipfs://cat' }, onchain_metadata_standard: 'CIP25v1' })
    expect(asset.fingerprint).toMatch(/^asset1/)
    const held = (await getJson(devnet, `/addresses/${w1.address}/utxos/${nft}`)).body
    expect(held).toHaveLength(1)
    expect(held[0].amount).toContainEqual({ unit: nft, quantity: '10' })
    expect((await getJson(devnet, `/assets/${nft}/addresses`)).body).toEqual([{ address: w1.address, quantity: '10' }])
  })

  it('a burn reduces the supply and is recorded in the asset history', async () => {
    const holding = devnet.ledger.unspentWithAsset(nft)[0]
    const policy = signaturePolicy(w1.payment)
    const hash = await acceptAndInclude(buildTx({ inputs: [holding], mint: [{ policy, name: 'DevnetCat', quantity: -4n }], signers: [w1.payment] }))
    expect((await getJson(devnet, `/assets/${nft}`)).body).toMatchObject({ quantity: '6', mint_or_burn_count: 2 })
    expect((await getJson(devnet, `/assets/${nft}/history?order=desc&count=1`)).body).toEqual([{ tx_hash: hash, action: 'burned', amount: '4' }])
  })

  it('burning more than is held does not balance', async () => {
    const holding = devnet.ledger.unspentWithAsset(nft)[0]
    const cbor = buildTx({ inputs: [holding], mint: [{ policy: signaturePolicy(w1.payment), name: 'DevnetCat', quantity: -7n }], signers: [w1.payment] })
    await expectRejected(cbor, new RegExp(`^ValueNotConservedUTxO: consumed \\d+ lovelace \\+ -1 ${nft}, produced \\d+ lovelace$`))
  })

  it('a CIP-20 message is stored as label 674 metadata', async () => {
    const message = { msg: ['Invoice 42 paid', 'thanks!'] }
    const hash = await acceptAndInclude(transfer({ metadata: { 674: message } }))
    expect((await getJson(devnet, `/txs/${hash}/metadata`)).body).toEqual([{ label: '674', json_metadata: message }])
    expect((await getJson(devnet, `/metadata/txs/labels/674?order=desc&count=1`)).body).toEqual([{ tx_hash: hash, json_metadata: message }])
    const cbor = (await getJson(devnet, `/txs/${hash}/metadata/cbor`)).body[0]
    expect(CSL.GeneralTransactionMetadata.from_hex(cbor.metadata).get(CSL.BigNum.from_str('674'))).toBeDefined()
  })

  it('a stake registration with delegation takes a deposit, shows on the account and refunds on deregistration', async () => {
    const stakeKey = CSL.PrivateKey.from_normal_bytes(Buffer.alloc(32, 9))
    const credential = CSL.Credential.from_keyhash(stakeKey.to_public().hash())
    const stakeAddress = CSL.RewardAddress.new(0, credential).to_address().to_bech32()
    const address = CSL.BaseAddress.new(0, CSL.Credential.from_keyhash(w1.payment.to_public().hash()), credential).to_address().to_bech32()
    const pool = [...devnet.ledger.pools.values()][1]
    const registerAndDelegate = CSL.Certificate.new_stake_registration_and_delegation(
      CSL.StakeRegistrationAndDelegation.new(credential, CSL.Ed25519KeyHash.from_hex(pool.hex), CSL.BigNum.from_str('2000000')))
    const hash = await acceptAndInclude(transfer({ outputs: [{ address, coin: 100n * ADA }], certificates: [registerAndDelegate], deposits: 2n * ADA, signers: [w1.payment, stakeKey] }))

    expect((await getJson(devnet, `/txs/${hash}`)).body).toMatchObject({ deposit: '2000000', delegation_count: 1, stake_cert_count: 1 })
    expect((await getJson(devnet, `/accounts/${stakeAddress}`)).body).toMatchObject({ registered: true, active: true, pool_id: pool.id, controlled_amount: '100000000' })
    expect((await getJson(devnet, `/accounts/${stakeAddress}/delegations`)).body).toEqual([expect.objectContaining({ tx_hash: hash, pool_id: pool.id })])
    expect((await getJson(devnet, `/accounts/${stakeAddress}/addresses`)).body).toEqual([{ address }])
    expect((await getJson(devnet, `/pools/${pool.id}/delegators`)).body).toContainEqual({ address: stakeAddress, live_stake: '100000000' })

    const deregister = CSL.Certificate.new_stake_deregistration(CSL.StakeDeregistration.new(credential))
    const withoutWitness = transfer({ certificates: [deregister], deposits: -2n * ADA })
    expect((await submitHttp(devnet, withoutWitness)).body.message).toBe(`MissingVKeyWitnessesUTXOW: missing signature of key hash ${stakeKey.to_public().hash().to_hex()}`)
    const refundHash = await acceptAndInclude(transfer({ certificates: [deregister], deposits: -2n * ADA, signers: [w1.payment, stakeKey] }))
    expect((await getJson(devnet, `/txs/${refundHash}`)).body.deposit).toBe('-2000000')
    expect((await getJson(devnet, `/accounts/${stakeAddress}`)).body).toMatchObject({ registered: false, pool_id: null })
  })

  it('a time-locked policy mints within its window', async () => {
    const scripts = CSL.NativeScripts.new()
    scripts.add(signaturePolicy(w1.payment))
    scripts.add(CSL.NativeScript.new_timelock_expiry(CSL.TimelockExpiry.new_timelockexpiry(CSL.BigNum.from_str('1000000'))))
    const policy = CSL.NativeScript.new_script_all(CSL.ScriptAll.new(scripts))
    await acceptAndInclude(transfer({ mint: [{ policy, name: 'Timed', quantity: 1n }], ttl: 1_000_000 }))
    expect(devnet.ledger.assets.get(unitOf(policy, 'Timed'))?.quantity).toBe(1n)
  })

  it('keeps the total of all lovelace equal to the maximum supply', () => {
    expect(devnet.ledger.accountedSupply()).toBe(45_000_000_000_000_000n)
  })
})
