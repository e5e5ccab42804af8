import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentSignatureHeader } from '@x402/core/http'
import type { PaymentRequired } from '@x402/core/types'
import { chainA, type ChainAService } from '../../srv/chains/chain-a/index.ts'
import { builderFor } from '../../srv/chains/chain-a/builders/index.ts'
import type { WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { CardanoExactClient } from '../../srv/chains/chain-a/payments/exact-client.ts'
import { quoteMemo, verifyExactPayment, type ExactRequirement, type PaymentChainView } from '../../srv/chains/chain-a/payments/exact.ts'
import { preparePayment, type PreparedPayment } from '../../srv/chains/chain-a/payments/payment-transaction.ts'
import { slotConfigFor, type SlotConfig } from '../../srv/chains/chain-a/plutus.ts'
import type { ChainProtocolParameters, ChainUtxo } from '../../srv/chains/chain-a/port.ts'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith, witnessSetOf } from '../support/sign.ts'

/**
 * The chain layer of the x402 purchase lane: a payment prepared for a devnet wallet, signed by it,
 * is accepted by the exact-scheme verifier; every way a payment can be wrong is refused with its
 * reason, and no malformed payload makes it throw.
 */

cds.test(__dirname + '/../..')

const PRICE = 7_000_000n
const QUOTE = 'a0b1c2d3-0000-4000-8000-000000000001'
const TIMEOUT_S = 600

let chain: ChainAService
let devnet: ReturnType<typeof runningDevnet>
let params: ChainProtocolParameters
let slotConfig: SlotConfig
let payer: WalletKeyPair
let other: WalletKeyPair
let payTo: string

beforeAll(async () => {
  chain = await chainA()
  devnet = runningDevnet()
  params = await chain.protocolParameters()
  slotConfig = slotConfigFor(chain.networkName, await chain.genesis())
  payer = devnet.walletKeys('wallet-1')
  other = devnet.walletKeys('wallet-2')
  payTo = devnet.wallets().at(-1)!.address
})

const currentSlot = () => slotConfig.zeroSlot + Math.floor((Date.now() - slotConfig.zeroTimeMs) / slotConfig.slotLengthMs)

/** The chain as the purchase lane sees it: the current slot by the clock, outputs through the chain-a port. */
function view(overrides: Partial<PaymentChainView> = {}): PaymentChainView {
  return {
    currentSlot: currentSlot(),
    slotLengthSeconds: slotConfig.slotLengthMs / 1000,
    protocolParameters: params,
    output: async ref => {
      const tx = await chain.port.transaction(ref.txHash)
      const output = tx?.outputs.find(candidate => candidate.outputIndex === ref.outputIndex && !candidate.collateral)
      return output ? { address: output.address, lovelace: output.lovelace, assets: output.assets, consumedBy: output.consumedBy } : null
    },
    ...overrides,
  }
}

const requirement = (overrides: Partial<ExactRequirement> = {}): ExactRequirement => ({
  networkId: 0, payTo, amount: PRICE, quoteId: QUOTE, maxTimeoutSeconds: TIMEOUT_S, ...overrides,
})

const utxosOf = (wallet: WalletKeyPair) => chain.port.addressUtxos(wallet.address)

async function prepare(overrides: { amount?: bigint; quoteId?: string; ttlSeconds?: number; payTo?: string; utxos?: ChainUtxo[]; wallet?: WalletKeyPair } = {}): Promise<PreparedPayment> {
  const wallet = overrides.wallet ?? payer
  return preparePayment({
    payer: wallet.address, payTo: overrides.payTo ?? payTo, amount: overrides.amount ?? PRICE, quoteId: overrides.quoteId ?? QUOTE, ttlSeconds: overrides.ttlSeconds ?? TIMEOUT_S - 30,
    utxos: overrides.utxos ?? (await utxosOf(wallet)), protocolParameters: params, currentSlot: currentSlot(), networkId: 0, slotConfig,
  })
}

const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64')
const payloadOf = (signedHex: string, nonce: string) => ({ transaction: base64(signedHex), nonce })

/** A prepared payment signed by the payer, as its payload. */
async function signedPayment(overrides: Parameters<typeof prepare>[0] = {}) {
  const prepared = await prepare(overrides)
  const signed = signWith(prepared.unsignedTxCbor, (overrides.wallet ?? payer).payment)
  return { prepared, signed, payload: payloadOf(signed, prepared.nonce) }
}

const verify = (payload: unknown, required: Partial<ExactRequirement> = {}, chainView: Partial<PaymentChainView> = {}) => verifyExactPayment(payload, requirement(required), view(chainView))

/** Expects a refusal with the reason, and a message that names the problem. */
async function expectRefused(payload: unknown, reason: string, message: RegExp, required: Partial<ExactRequirement> = {}, chainView: Partial<PaymentChainView> = {}) {
  const verdict = await verify(payload, required, chainView)
  expect(verdict).toEqual({ ok: false, reason, message: expect.stringMatching(message) })
}

interface BodyChange {
  inputs?: CSL.TransactionInputs
  outputs?: CSL.TransactionOutputs
  fee?: bigint
  change?: (body: CSL.TransactionBody) => void
}

/** The prepared transaction with its body changed (validity and metadata hash kept), unsigned. */
function changed(prepared: PreparedPayment, what: BodyChange): string {
  const original = CSL.FixedTransaction.from_hex(prepared.unsignedTxCbor)
  const body = original.body()
  const next = CSL.TransactionBody.new_tx_body(what.inputs ?? body.inputs(), what.outputs ?? body.outputs(), what.fee === undefined ? body.fee() : CSL.BigNum.from_str(String(what.fee)))
  if (body.ttl_bignum()) next.set_ttl(body.ttl_bignum()!)
  if (body.auxiliary_data_hash()) next.set_auxiliary_data_hash(body.auxiliary_data_hash()!)
  what.change?.(next)
  const raw = original.raw_auxiliary_data()
  const empty = CSL.TransactionWitnessSet.new().to_bytes()
  return (raw ? CSL.FixedTransaction.new_with_auxiliary(next.to_bytes(), empty, raw, true) : CSL.FixedTransaction.new(next.to_bytes(), empty, true)).to_hex()
}

function outputsOf(prepared: PreparedPayment): CSL.TransactionOutput[] {
  const outputs = CSL.FixedTransaction.from_hex(prepared.unsignedTxCbor).body().outputs()
  return Array.from({ length: outputs.len() }, (_, i) => outputs.get(i))
}

function outputList(outputs: CSL.TransactionOutput[]): CSL.TransactionOutputs {
  const list = CSL.TransactionOutputs.new()
  outputs.forEach(output => list.add(output))
  return list
}

const coin = (output: CSL.TransactionOutput) => BigInt(output.amount().coin().to_str())
const withCoin = (output: CSL.TransactionOutput, lovelace: bigint) => CSL.TransactionOutput.new(output.address(), CSL.Value.new(CSL.BigNum.from_str(String(lovelace))))
const mainnetAddressOf = (wallet: WalletKeyPair) =>
  CSL.EnterpriseAddress.new(1, CSL.Credential.from_keyhash(wallet.payment.to_public().hash())).to_address()

describe('a prepared payment', () => {
  test('pays the amount to payTo with the quote\'s memo, change back to the payer, valid until ttlSeconds from now', async () => {
    const slot = currentSlot()
    const prepared = await prepare()
    const tx = CSL.FixedTransaction.from_hex(prepared.unsignedTxCbor)
    expect(tx.transaction_hash().to_hex()).toBe(prepared.txHash)
    const outputs = outputsOf(prepared)
    expect(outputs.map(output => output.address().to_bech32())).toEqual([payTo, payer.address])
    expect(coin(outputs[0])).toBe(PRICE)
    const inputs = tx.body().inputs()
    expect(prepared.nonce).toBe(`${inputs.get(0).transaction_id().to_hex()}#${inputs.get(0).index()}`)
    const memo = JSON.parse(CSL.decode_metadatum_to_json_str(tx.auxiliary_data()!.metadata()!.get(CSL.BigNum.from_str('674'))!, CSL.MetadataJsonSchema.BasicConversions))
    expect(memo).toEqual({ msg: [quoteMemo(QUOTE)] })
    const slots = Math.floor(((TIMEOUT_S - 30) * 1000) / slotConfig.slotLengthMs)
    expect(prepared.ttlSlot).toBeGreaterThanOrEqual(slot + slots)
    expect(prepared.ttlSlot).toBeLessThanOrEqual(currentSlot() + slots)
    expect(Number(tx.body().ttl_bignum()!.to_str())).toBe(prepared.ttlSlot)
    expect(tx.body().validity_start_interval_bignum()).toBeUndefined()
  })

  test('signed by the payer, is accepted by the verifier', async () => {
    const { prepared, signed, payload } = await signedPayment()
    const verdict = await verify(payload)
    expect(verdict).toEqual({ ok: true, txHash: prepared.txHash, payer: payer.address, paid: PRICE, ttlSlot: prepared.ttlSlot, cbor: new Uint8Array(Buffer.from(signed, 'hex')) })
  })

  test('a payer with too little ADA gets the builder\'s own 400', async () => {
    await expect(prepare({ amount: 1_000_000_000_000_000n })).rejects.toMatchObject({ status: 400, code: 'INSUFFICIENT_FUNDS' })
  })

  test('a validity of less than one slot is refused', async () => {
    await expect(prepare({ ttlSeconds: 0 })).rejects.toMatchObject({ status: 400, code: 'INVALID_VALIDITY_INTERVAL' })
  })
})

describe('the verifier refuses', () => {
  test('a transaction for another network: its body says mainnet, or it pays a mainnet address', async () => {
    const prepared = await prepare()
    const mainnetBody = changed(prepared, { change: body => body.set_network_id(CSL.NetworkId.mainnet()) })
    await expectRefused(payloadOf(signWith(mainnetBody, payer.payment), prepared.nonce), 'network_mismatch', /mainnet/)

    const mainnetPayTo = mainnetAddressOf(devnet.walletKeys('wallet-4'))
    const [pay, change] = outputsOf(prepared)
    const toMainnet = changed(prepared, { outputs: outputList([CSL.TransactionOutput.new(mainnetPayTo, pay.amount()), change]) })
    await expectRefused(payloadOf(signWith(toMainnet, payer.payment), prepared.nonce), 'network_mismatch', /Output 0 pays addr1.*mainnet/, { payTo: mainnetPayTo.to_bech32() })
  })

  test('a payment to another address, or of less than the amount (overpaying is fine)', async () => {
    const elsewhere = await signedPayment({ payTo: other.address })
    await expectRefused(elsewhere.payload, 'wrong_recipient', new RegExp(`no output to ${payTo}`))
    const less = await signedPayment({ amount: PRICE - 1n })
    await expectRefused(less.payload, 'insufficient_amount', new RegExp(`pays ${PRICE - 1n} lovelace .* the price is ${PRICE}`))
    const more = await signedPayment({ amount: PRICE + 1n })
    expect(await verify(more.payload)).toMatchObject({ ok: true, paid: PRICE + 1n })
  })

  test('a payment for another quote, or without the quote\'s memo', async () => {
    const another = await signedPayment({ quoteId: 'b0b1c2d3-0000-4000-8000-000000000002' })
    await expectRefused(another.payload, 'quote_mismatch', /names quote b0b1c2d3-0000-4000-8000-000000000002, not quote a0b1c2d3/)

    const utxos = await utxosOf(payer)
    const plain = await builderFor('csl').build({
      utxos, changeAddress: payer.address, protocolParameters: params, currentSlot: currentSlot(), networkId: 0, slotConfig,
      outputs: [{ address: payTo, lovelace: String(PRICE) }], validity: { invalidBefore: null, invalidHereafter: currentSlot() + 300 },
    })
    const nonce = `${plain.inputs[0].txHash}#${plain.inputs[0].outputIndex}`
    await expectRefused(payloadOf(signWith(plain.unsignedTxCbor, payer.payment), nonce), 'quote_mismatch', /carries no memo 'x402 quote a0b1c2d3/)
  })

  test('metadata swapped after signing (another quote\'s memo on this body)', async () => {
    const { prepared, signed } = await signedPayment()
    const another = await prepare({ quoteId: 'c0b1c2d3-0000-4000-8000-000000000003' })
    const tx = CSL.FixedTransaction.from_hex(signed)
    tx.set_auxiliary_data(CSL.FixedTransaction.from_hex(another.unsignedTxCbor).raw_auxiliary_data()!)
    await expectRefused(payloadOf(tx.to_hex(), prepared.nonce), 'invalid_transaction', /auxiliary data hash/)
  })

  test('a transaction that mints, or an output with a datum: a payment is a plain transfer', async () => {
    const utxos = await utxosOf(payer)
    const policy = JSON.stringify({ type: 'sig', keyHash: payer.payment.to_public().hash().to_hex() })
    const minting = await builderFor('csl').build({
      utxos, changeAddress: payer.address, protocolParameters: params, currentSlot: currentSlot(), networkId: 0, slotConfig,
      outputs: [{ address: payTo, lovelace: String(PRICE) }], mint: [{ policy, assets: [{ assetName: '74657374', quantity: '1' }] }],
      metadataJson: JSON.stringify({ 674: { msg: [quoteMemo(QUOTE)] } }), validity: { invalidBefore: null, invalidHereafter: currentSlot() + 300 },
    })
    const nonce = `${minting.inputs[0].txHash}#${minting.inputs[0].outputIndex}`
    await expectRefused(payloadOf(signWith(minting.unsignedTxCbor, payer.payment), nonce), 'forbidden_content', /mints or burns tokens/)

    const prepared = await prepare()
    const [pay, change] = outputsOf(prepared)
    const withDatum = CSL.TransactionOutput.new(pay.address(), pay.amount())
    withDatum.set_data_hash(CSL.DataHash.from_hex('00'.repeat(32)))
    const tx = changed(prepared, { outputs: outputList([withDatum, change]) })
    await expectRefused(payloadOf(signWith(tx, payer.payment), prepared.nonce), 'forbidden_content', /output 0 holds a datum/)
  })

  test('a nonce that is not among the inputs', async () => {
    const { signed } = await signedPayment()
    const [elsewhere] = await utxosOf(other)
    await expectRefused(payloadOf(signed, `${elsewhere.txHash}#${elsewhere.outputIndex}`), 'nonce_not_in_inputs', /is not among the outputs the transaction spends/)
  })

  test('no validity end, one that has passed, one too far ahead, and one not yet started', async () => {
    const prepared = await prepare()
    const noTtl = changed(prepared, { change: body => body.remove_ttl() })
    await expectRefused(payloadOf(signWith(noTtl, payer.payment), prepared.nonce), 'ttl_missing', /no validity end/)

    const { payload } = await signedPayment()
    await expectRefused(payload, 'ttl_expired', /valid until slot/, {}, { currentSlot: prepared.ttlSlot + 1 })
    await expectRefused(payload, 'ttl_too_far', /at most 60 s/, { maxTimeoutSeconds: 60 })
    const far = await signedPayment({ ttlSeconds: TIMEOUT_S + 120 })
    await expectRefused(far.payload, 'ttl_too_far', new RegExp(`at most ${TIMEOUT_S} s`))

    const later = changed(prepared, { change: body => body.set_validity_start_interval_bignum(CSL.BigNum.from_str(String(currentSlot() + 100))) })
    await expectRefused(payloadOf(signWith(later, payer.payment), prepared.nonce), 'ttl_not_started', /valid from slot/)
  })

  test('an output below its minimum ADA', async () => {
    const prepared = await prepare()
    const [pay, change] = outputsOf(prepared)
    const dust = withCoin(pay, 1000n)
    const tx = changed(prepared, { outputs: outputList([pay, withCoin(change, coin(change) - 1000n), dust]) })
    await expectRefused(payloadOf(signWith(tx, payer.payment), prepared.nonce), 'output_below_min_ada', /Output 2 holds 1000 lovelace, less than the \d+ lovelace it needs/)
  })

  test('a fee below the minimum for the transaction\'s size', async () => {
    const prepared = await prepare()
    const [pay, change] = outputsOf(prepared)
    const fee = BigInt(CSL.FixedTransaction.from_hex(prepared.unsignedTxCbor).body().fee().to_str())
    const tx = changed(prepared, { fee: 1000n, outputs: outputList([pay, withCoin(change, coin(change) + fee - 1000n)]) })
    await expectRefused(payloadOf(signWith(tx, payer.payment), prepared.nonce), 'fee_below_minimum', /The fee is 1000 lovelace, less than/)
  })

  test('an input the chain does not know', async () => {
    const prepared = await prepare()
    const unknown = `${'ab'.repeat(32)}#0`
    const inputs = CSL.TransactionInputs.new()
    inputs.add(CSL.TransactionInput.new(CSL.TransactionHash.from_hex('ab'.repeat(32)), 0))
    const tx = changed(prepared, { inputs })
    await expectRefused(payloadOf(signWith(tx, payer.payment), unknown), 'unknown_input', new RegExp(`knows no output ${unknown}`))
  })

  test('value not conserved: the outputs and the fee do not add up to the inputs', async () => {
    const prepared = await prepare()
    const [pay, change] = outputsOf(prepared)
    const tx = changed(prepared, { outputs: outputList([pay, withCoin(change, coin(change) - 1n)]) })
    await expectRefused(payloadOf(signWith(tx, payer.payment), prepared.nonce), 'value_not_conserved', /The inputs hold \d+ lovelace, but the outputs and the fee come to \d+ lovelace/)
  })

  test('spending an output locked by a script or held by a Byron address', async () => {
    const { payload } = await signedPayment()
    const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(CSL.ScriptHash.from_hex('cd'.repeat(28)))).to_address().to_bech32()
    for (const [address, what] of [[scriptAddress, 'locked by a script'], ['Ae2tdPwUPEZFRbyhz3cpfC2CumGzNkFBN2L42rcUc2yjQpEkxDbkPodpMAi', 'not a Shelley key address']]) {
      const chainView = view()
      const output: PaymentChainView['output'] = async ref => {
        const found = await chainView.output(ref)
        return found && { ...found, address }
      }
      await expectRefused(payload, 'forbidden_content', new RegExp(what), {}, { output })
    }
  })

  test('an unsigned payment, one signed by another wallet, and a signature over another body', async () => {
    const prepared = await prepare()
    await expectRefused(payloadOf(prepared.unsignedTxCbor, prepared.nonce), 'missing_signature', new RegExp(`key ${payer.payment.to_public().hash().to_hex()}, needed for input`))
    await expectRefused(payloadOf(signWith(prepared.unsignedTxCbor, other.payment), prepared.nonce), 'missing_signature', /lacks a valid signature/)

    const [pay, change] = outputsOf(prepared)
    const otherBody = changed(prepared, { outputs: outputList([withCoin(pay, coin(pay) + 1n), withCoin(change, coin(change) - 1n)]) })
    const foreign = CSL.FixedTransaction.from_hex(signWith(otherBody, payer.payment)).witness_set().vkeys()!.get(0)
    const tx = CSL.FixedTransaction.from_hex(prepared.unsignedTxCbor)
    tx.add_vkey_witness(foreign)
    await expectRefused(payloadOf(tx.to_hex(), prepared.nonce), 'invalid_signature', /does not verify over transaction/)
  })

  test('malformed payloads, never throwing', async () => {
    const { signed, prepared } = await signedPayment()
    const nonce = prepared.nonce
    for (const payload of [null, undefined, [], {}, 0, 42, 'payment', true, { transaction: base64(signed) }, { nonce }, { transaction: 42, nonce },
      { transaction: '', nonce }, { transaction: 'not base64!', nonce }, { transaction: `${base64(signed)}#`, nonce }, { transaction: base64(signed), nonce: 'abc#0' },
      { transaction: base64(signed), nonce: `${'ab'.repeat(32)}#x` }, { transaction: base64(signed), nonce: 17 }, { transaction: base64(signed), nonce, extra: 1 }, [base64(signed), nonce]]) {
      await expectRefused(payload, 'invalid_payload', /payload/i)
    }
    const nested = '81'.repeat(5000) + '00'
    for (const hex of ['00', 'a0', 'ff', '80', signed.slice(0, signed.length - 10), `${signed}00`, nested, Buffer.from('{"transaction":1}').toString('hex')]) {
      await expectRefused({ transaction: base64(hex), nonce }, 'invalid_transaction', /transaction/)
    }
    await expectRefused({ transaction: base64('00'.repeat(params.maxTxSize + 1)), nonce }, 'invalid_transaction', /more than the \d+ a transaction may have/)
  })
})

describe('on chain', () => {
  test('a transaction spending an input another transaction spent is refused; the accepted one still verifies, also after its validity ended', async () => {
    const utxos = await utxosOf(payer)
    const first = await signedPayment({ utxos })
    const second = await signedPayment({ utxos, quoteId: 'd0b1c2d3-0000-4000-8000-000000000004' })
    expect(second.prepared.nonce).toBe(first.prepared.nonce)

    expect(await chain.port.submit(Buffer.from(first.signed, 'hex'))).toBe(first.prepared.txHash)
    expect(devnet.produceBlock().txs).toContain(first.prepared.txHash)

    await expectRefused(second.payload, 'input_spent', new RegExp(`${second.prepared.nonce} was spent already, by transaction ${first.prepared.txHash}`), { quoteId: 'd0b1c2d3-0000-4000-8000-000000000004' })
    // Consumed by this very transaction: the ledger accepted the payment, a retry resumes it.
    expect(await verify(first.payload)).toMatchObject({ ok: true, txHash: first.prepared.txHash, payer: payer.address, paid: PRICE })
    expect(await verify(first.payload, {}, { currentSlot: first.prepared.ttlSlot + 10 })).toMatchObject({ ok: true, txHash: first.prepared.txHash })
  })
})

test('a chain read that fails is an error (the port\'s 503), not a verdict', async () => {
  const { payload } = await signedPayment()
  const unavailable = Object.assign(new Error('the upstream is unavailable'), { status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  await expect(verify(payload, {}, { output: async () => { throw unavailable } })).rejects.toBe(unavailable)
})

describe('the x402 client scheme for @x402/core', () => {
  async function paymentRequired(prepared?: PreparedPayment): Promise<PaymentRequired> {
    return {
      x402Version: 2,
      resource: { url: 'http://localhost/keys', description: 'a key', mimeType: 'application/json' },
      accepts: [{
        scheme: 'exact', network: 'cardano:devnet', asset: 'lovelace', amount: String(PRICE), payTo, maxTimeoutSeconds: TIMEOUT_S,
        extra: { quoteId: QUOTE, ...(prepared ? { transaction: prepared.unsignedTxCbor, nonce: prepared.nonce } : {}) },
      }],
    }
  }

  /** The public library's client with our scheme registered, allowed to spend lovelace up to 10 ADA a payment. */
  const httpClient = (sign: (hex: string) => Promise<string>) => new x402HTTPClient(x402Client.fromConfig({
    schemes: [{ network: 'cardano:*', client: new CardanoExactClient(sign) }],
    spendControls: { allowedAssets: [{ network: 'cardano:devnet', asset: 'lovelace', maxAmountPerPayment: '10000000' }] },
  }))

  test.each([
    ['a signed transaction', (hex: string) => signWith(hex, payer.payment)],
    ['a CIP-30 witness set', (hex: string) => witnessSetOf(hex, payer.payment)],
  ])('signing with %s, makes a PAYMENT-SIGNATURE header whose payload the verifier accepts', async (_kind, sign) => {
    const prepared = await prepare()
    const client = httpClient(async hex => sign(hex))
    const payload = await client.createPaymentPayload(await paymentRequired(prepared))
    const headers = client.encodePaymentSignatureHeader(payload)
    const decoded = decodePaymentSignatureHeader(headers['PAYMENT-SIGNATURE'])
    expect(decoded).toMatchObject({ x402Version: 2, accepted: { scheme: 'exact', network: 'cardano:devnet', extra: { quoteId: QUOTE } }, payload: { nonce: prepared.nonce } })
    expect(await verify(decoded.payload)).toMatchObject({ ok: true, txHash: prepared.txHash, payer: payer.address })
  })

  test('takes the first input as the nonce when the server names none', async () => {
    const prepared = await prepare()
    const required = await paymentRequired(prepared)
    delete required.accepts[0].extra.nonce
    const payload = await httpClient(async hex => signWith(hex, payer.payment)).createPaymentPayload(required)
    expect(payload.payload.nonce).toBe(prepared.nonce)
  })

  test('refuses requirements without a prepared transaction, or whose transaction pays another amount', async () => {
    const client = httpClient(async hex => signWith(hex, payer.payment))
    await expect(client.createPaymentPayload(await paymentRequired())).rejects.toThrow(/ask the server for the quote with your `payer` address/)
    const cheaper = await prepare({ amount: PRICE - 1n })
    await expect(client.createPaymentPayload(await paymentRequired(cheaper))).rejects.toThrow(/pays 6999999 lovelace .* not the 7000000 lovelace/)
  })
})
