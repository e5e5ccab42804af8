import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { addressNetworkId, addressText, fromCslValue, listOf, metadatumJson, parseRef, paymentCredentialOf, refOf, refOfInput, type OutputRef } from '../csl.ts'
import type { AssetQuantity, ChainProtocolParameters } from '../port.ts'
import { verifySignedTransaction } from '../signing/verify.ts'
import { messageOf, parseTransaction } from '../signing/witnesses.ts'
import { addValue, describeValue, lovelace, sumValues, valuesEqual, type Value } from '../value.ts'

/**
 * The verifier of an x402 version 2 payment in the Cardano `exact` scheme (x402-foundation
 * `scheme_exact_cardano.md`, rules 1-8; confirmation evidence, rule 9, is the settlement's): the
 * payload `{ transaction, nonce }` is decoded keeping the original bytes, checked by pure rules
 * (network, recipient, amount, the quote's CIP-20 memo, plain-transfer content, nonce, validity
 * interval, minimum ADA, fee floor), then against the chain (inputs known and unspent, value
 * conserved, every input's key has signed). A payment is bound to its quote by the memo
 * `x402 quote <id>` under metadata label 674. An input spent by this very transaction is no
 * failure: the ledger accepted the payment, and a retry after `settlement_pending` resumes it.
 *
 * Every malformed thing is a verdict with a lower_snake reason; only chain reads may throw.
 */

export interface ExactRequirement {
  /** 0 for the test networks (devnet, preprod, preview), 1 for mainnet. */
  networkId: number
  /** bech32 */
  payTo: string
  /** lovelace */
  amount: bigint
  /** Must appear in the transaction's metadata as quoteMemo(quoteId). */
  quoteId: string
  maxTimeoutSeconds: number
}

export interface ChainOutputView {
  address: string
  lovelace: string
  assets: AssetQuantity[]
  consumedBy: string | null
}

export interface PaymentChainView {
  currentSlot: number
  slotLengthSeconds: number
  protocolParameters: ChainProtocolParameters
  /** The output an input spends as the chain knows it now (address, lovelace, assets) and the tx that spent it, or null when unknown. */
  output(ref: OutputRef): Promise<ChainOutputView | null>
}

type PaymentVerdict =
  | { ok: true; txHash: string; payer: string; paid: bigint; ttlSlot: number; cbor: Uint8Array }
  | { ok: false; reason: string; message: string }

type Refusal = Extract<PaymentVerdict, { ok: false }>

/** The CIP-20 message line (metadata label 674 `{ msg: [...] }`) that binds a payment to its quote. */
export const quoteMemo = (quoteId: string) => `x402 quote ${quoteId}`

const MEMO_LINE = /^x402 quote (.+)$/
const CIP20_LABEL = 674
/** Per output, the ledger counts this many bytes on top of the output's own size for its minimum ADA. */
const OUTPUT_OVERHEAD_BYTES = 160n
const NONCE = /^([0-9a-fA-F]{64})#(0|[1-9][0-9]{0,5})$/
const BASE64 = /^[A-Za-z0-9+/]*$/

const refuse = (reason: string, message: string): Refusal => ({ ok: false, reason, message })

interface Decoded {
  tx: CSL.FixedTransaction
  body: CSL.TransactionBody
  bytes: Uint8Array
  nonce: OutputRef
}

export async function verifyExactPayment(payload: unknown, requirement: ExactRequirement, chain: PaymentChainView): Promise<PaymentVerdict> {
  const decoded = await decodePayload(payload, chain.protocolParameters.maxTxSize)
  if ('reason' in decoded) return decoded
  const { tx, body, bytes, nonce } = decoded
  const txHash = tx.transaction_hash().to_hex()
  const problem = guarded(() => transferProblem(decoded, requirement))
  if (problem) return problem
  const timing = guarded(() => timingProblem(body, requirement, chain))
  if (timing && timing.reason !== 'ttl_expired') return timing
  const costs = guarded(() => minimumAdaProblem(body, chain.protocolParameters) ?? feeProblem(body, bytes.length, chain.protocolParameters))
  if (costs) return costs

  const inputs = await readInputs(body, txHash, chain)
  if ('reason' in inputs) return inputs
  const payer = inputs.spent.get(refOf(nonce))!
  // A validity interval that has passed since the ledger accepted this very transaction is no reason to refuse its retry.
  if (timing && payer.consumedBy !== txHash) return timing
  const onChain = guarded(() => ownershipProblem(inputs.spent) ?? conservationProblem(body, inputs.spent))
  if (onChain) return onChain
  const signatures = await signatureProblem(tx, txHash, inputs.spent)
  if (signatures) return signatures
  return { ok: true, txHash, payer: payer.address, paid: paidTo(body, requirement.payTo), ttlSlot: Number(body.ttl_bignum()!.to_str()), cbor: bytes }
}

/** Runs a pure check; whatever CSL throws on a transaction it parsed but cannot read is an invalid transaction, not an error. */
function guarded(check: () => Refusal | undefined): Refusal | undefined {
  try {
    return check()
  } catch (error) {
    return refuse('invalid_transaction', `The transaction cannot be read: ${messageOf(error)}`)
  }
}

// ---- the payload ----------------------------------------------------------------------------

async function decodePayload(payload: unknown, maxTxSize: number): Promise<Decoded | Refusal> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return refuse('invalid_payload', 'The payment payload must be an object { transaction: <base64 of the signed transaction>, nonce: "<txHash>#<index>" }')
  }
  const fields = payload as Record<string, unknown>
  const unexpected = Object.keys(fields).filter(name => name !== 'transaction' && name !== 'nonce')
  if (unexpected.length) return refuse('invalid_payload', `The payment payload has only transaction and nonce, not ${unexpected.slice(0, 5).join(', ')}`)
  const bytes = base64Bytes(fields.transaction)
  if (!bytes) return refuse('invalid_payload', 'payload.transaction must be the signed transaction\'s CBOR in base64')
  const nonce = typeof fields.nonce === 'string' ? NONCE.exec(fields.nonce) : null
  if (!nonce) return refuse('invalid_payload', 'payload.nonce must be an output reference "<transaction hash, 64 hex>#<index>"')
  if (bytes.length > maxTxSize) return refuse('invalid_transaction', `The transaction has ${bytes.length} bytes, more than the ${maxTxSize} a transaction may have`)
  let tx: CSL.FixedTransaction
  try {
    tx = parseTransaction(Buffer.from(bytes).toString('hex'), 'payload.transaction')
  } catch (error) {
    return refuse('invalid_transaction', `payload.transaction is not a Cardano transaction: ${messageOf(error)}`)
  }
  const body = tx.body()
  const auxiliary = await auxiliaryDataProblem(tx, body)
  if (auxiliary) return auxiliary
  return { tx, body, bytes, nonce: { txHash: nonce[1].toLowerCase(), outputIndex: Number(nonce[2]) } }
}

/** Standard base64 (padding optional) that decodes to at least one byte; undefined otherwise. */
function base64Bytes(value: unknown): Uint8Array | undefined {
  if (typeof value !== 'string') return undefined
  const text = value.trim().replace(/={1,2}$/, '')
  if (!text || !BASE64.test(text) || text.length % 4 === 1) return undefined
  const bytes = Buffer.from(text, 'base64')
  return bytes.toString('base64').replace(/={1,2}$/, '') === text ? bytes : undefined
}

/** The body commits to the auxiliary data (and so to the memo) by its hash: metadata swapped after signing is refused here. */
async function auxiliaryDataProblem(tx: CSL.FixedTransaction, body: CSL.TransactionBody): Promise<Refusal | undefined> {
  const raw = tx.raw_auxiliary_data()
  const declared = body.auxiliary_data_hash()?.to_hex()
  if (!raw && !declared) return undefined
  // Loaded on the first payment with metadata: the library takes a third of a second to load, which every start would pay.
  const { blake2b_256, toHex } = await import('@harmoniclabs/buildooor')
  if (!raw || !declared || toHex(blake2b_256(raw)) !== declared) {
    return refuse('invalid_transaction', 'The transaction\'s auxiliary data (its metadata) does not match the auxiliary data hash its body declares')
  }
  return undefined
}

// ---- pure checks ----------------------------------------------------------------------------

/** What the transaction is: a plain transfer on the right network, paying payTo the amount, for this quote, spending the nonce. */
function transferProblem({ tx, body, nonce }: Decoded, requirement: ExactRequirement): Refusal | undefined {
  return networkProblem(body, requirement)
    ?? recipientProblem(body, requirement)
    ?? quoteProblem(tx, requirement.quoteId)
    ?? contentProblem(tx, body)
    ?? nonceProblem(body, nonce)
}

const networkName = (networkId: number) => (networkId === 1 ? 'mainnet (network id 1)' : 'a test network (network id 0)')

function networkProblem(body: CSL.TransactionBody, requirement: ExactRequirement): Refusal | undefined {
  const declared = body.network_id()
  if (declared && networkIdOfKind(declared.kind()) !== requirement.networkId) {
    return refuse('network_mismatch', `The transaction is for ${networkName(networkIdOfKind(declared.kind()))}; this payment is made on ${networkName(requirement.networkId)}`)
  }
  const outputs = listOf(body.outputs())
  const index = outputs.findIndex(output => addressNetworkId(output.address()) !== requirement.networkId)
  if (index < 0) return undefined
  return refuse('network_mismatch', `Output ${index} pays ${addressText(outputs[index].address())}, an address of ${networkName(addressNetworkId(outputs[index].address()))}; this payment is made on ${networkName(requirement.networkId)}`)
}

const networkIdOfKind = (kind: CSL.NetworkIdKind) => (kind === CSL.NetworkIdKind.Mainnet ? 1 : 0)

const paysTo = (output: CSL.TransactionOutput, payTo: string) => addressText(output.address()) === payTo

function paidTo(body: CSL.TransactionBody, payTo: string): bigint {
  return listOf(body.outputs()).filter(output => paysTo(output, payTo)).reduce((sum, output) => sum + BigInt(output.amount().coin().to_str()), 0n)
}

function recipientProblem(body: CSL.TransactionBody, requirement: ExactRequirement): Refusal | undefined {
  if (!listOf(body.outputs()).some(output => paysTo(output, requirement.payTo))) {
    return refuse('wrong_recipient', `The transaction has no output to ${requirement.payTo}, the address this payment goes to`)
  }
  const paid = paidTo(body, requirement.payTo)
  if (paid < requirement.amount) return refuse('insufficient_amount', `The transaction pays ${paid} lovelace to ${requirement.payTo}; the price is ${requirement.amount} lovelace`)
  return undefined
}

/** The lines of the CIP-20 message (label 674 `{ msg: [...] }`); none when there is no such message. */
function memoLines(tx: CSL.FixedTransaction): string[] {
  const datum = tx.auxiliary_data()?.metadata()?.get(CSL.BigNum.from_str(String(CIP20_LABEL)))
  if (!datum) return []
  const message = JSON.parse(metadatumJson(datum)) as { msg?: unknown }
  return Array.isArray(message?.msg) ? message.msg.filter((line): line is string => typeof line === 'string') : []
}

function quoteProblem(tx: CSL.FixedTransaction, quoteId: string): Refusal | undefined {
  const quotes = memoLines(tx).flatMap(line => MEMO_LINE.exec(line.trim())?.[1] ?? [])
  const others = quotes.filter(id => id !== quoteId)
  if (others.length) return refuse('quote_mismatch', `The transaction's memo names quote ${others[0].slice(0, 64)}, not quote ${quoteId} this payment is for`)
  if (!quotes.length) return refuse('quote_mismatch', `The transaction carries no memo '${quoteMemo(quoteId)}' (CIP-20 metadata, label 674 { msg: [...] }) binding it to quote ${quoteId}`)
  return undefined
}

/** What a plain transfer does not carry: each is a reason to refuse it, named. */
function forbiddenParts(tx: CSL.FixedTransaction, body: CSL.TransactionBody): string[] {
  const witnesses = tx.witness_set()
  const present = (list: { len(): number } | undefined) => (list?.len() ?? 0) > 0
  const parts: [boolean, string][] = [
    [present(body.mint()), 'it mints or burns tokens'],
    [present(body.certs()), 'it carries certificates'],
    [present(body.withdrawals()), 'it withdraws rewards'],
    [present(body.voting_procedures()?.get_voters()), 'it votes'],
    [present(body.voting_proposals()), 'it makes governance proposals'],
    [body.update() !== undefined, 'it proposes a protocol update'],
    [body.donation() !== undefined || body.current_treasury_value() !== undefined, 'it donates to the treasury'],
    [present(body.collateral()) || body.collateral_return() !== undefined || body.total_collateral() !== undefined, 'it has collateral'],
    [body.script_data_hash() !== undefined || present(witnesses.redeemers()) || present(witnesses.plutus_data()), 'it carries redeemers or datums'],
    [present(witnesses.native_scripts()) || present(witnesses.plutus_scripts()), 'it carries scripts'],
    [present(witnesses.bootstraps()), 'it spends from Byron addresses'],
    [!tx.is_valid(), 'it is marked as failing its scripts'],
  ]
  const outputs = listOf(body.outputs())
  outputs.forEach((output, index) => {
    parts.push([output.has_data_hash() || output.has_plutus_data(), `output ${index} holds a datum`], [output.has_script_ref(), `output ${index} holds a reference script`])
  })
  return parts.filter(([found]) => found).map(([, what]) => what)
}

function contentProblem(tx: CSL.FixedTransaction, body: CSL.TransactionBody): Refusal | undefined {
  const parts = forbiddenParts(tx, body)
  return parts.length ? refuse('forbidden_content', `A payment is a plain transfer, but ${parts.join('; ')}`) : undefined
}

function nonceProblem(body: CSL.TransactionBody, nonce: OutputRef): Refusal | undefined {
  if (listOf(body.inputs()).map(refOfInput).includes(refOf(nonce))) return undefined
  return refuse('nonce_not_in_inputs', `The nonce ${refOf(nonce)} is not among the outputs the transaction spends`)
}

function minimumAdaProblem(body: CSL.TransactionBody, params: ChainProtocolParameters): Refusal | undefined {
  const perByte = BigInt(params.coinsPerUtxoSize)
  const outputs = listOf(body.outputs())
  for (const [index, output] of outputs.entries()) {
    const minimum = (OUTPUT_OVERHEAD_BYTES + BigInt(output.to_bytes().length)) * perByte
    const coin = BigInt(output.amount().coin().to_str())
    if (coin < minimum) return refuse('output_below_min_ada', `Output ${index} holds ${coin} lovelace, less than the ${minimum} lovelace it needs`)
  }
  return undefined
}

function feeProblem(body: CSL.TransactionBody, size: number, params: ChainProtocolParameters): Refusal | undefined {
  const minimum = BigInt(params.minFeeA) * BigInt(size) + BigInt(params.minFeeB)
  const fee = BigInt(body.fee().to_str())
  return fee < minimum ? refuse('fee_below_minimum', `The fee is ${fee} lovelace, less than the ${minimum} lovelace a transaction of ${size} bytes needs`) : undefined
}

/** Slots the payment may stay valid: maxTimeoutSeconds, rounded up to whole slots. */
const validitySlots = (requirement: ExactRequirement, chain: PaymentChainView) => Math.ceil(requirement.maxTimeoutSeconds / chain.slotLengthSeconds)

function timingProblem(body: CSL.TransactionBody, requirement: ExactRequirement, chain: PaymentChainView): Refusal | undefined {
  const ttlValue = body.ttl_bignum()
  if (!ttlValue) return refuse('ttl_missing', 'The transaction has no validity end (ttl): a payment must expire')
  const ttl = Number(ttlValue.to_str())
  const latest = chain.currentSlot + validitySlots(requirement, chain)
  if (ttl <= chain.currentSlot) return refuse('ttl_expired', `The transaction was valid until slot ${ttl}; the chain is at slot ${chain.currentSlot}`)
  if (ttl > latest) return refuse('ttl_too_far', `The transaction is valid until slot ${ttl}; a payment may be valid for at most ${requirement.maxTimeoutSeconds} s, until slot ${latest}`)
  const start = body.validity_start_interval_bignum()
  if (start && Number(start.to_str()) > chain.currentSlot) {
    return refuse('ttl_not_started', `The transaction is valid from slot ${start.to_str()} only; the chain is at slot ${chain.currentSlot}`)
  }
  return undefined
}

// ---- chain checks ---------------------------------------------------------------------------

interface ReadInputs {
  /** The spent inputs as the chain knows them, by reference. */
  spent: Map<string, ChainOutputView>
}

/** Every spent and referenced output, known to the chain and not spent by another transaction. */
async function readInputs(body: CSL.TransactionBody, txHash: string, chain: PaymentChainView): Promise<ReadInputs | Refusal> {
  const spentRefs = listOf(body.inputs()).map(refOfInput)
  const referenced = listOf(body.reference_inputs()).map(refOfInput)
  const spent = new Map<string, ChainOutputView>()
  for (const ref of [...spentRefs, ...referenced]) {
    const output = await chain.output(parseRef(ref))
    if (!output) return refuse('unknown_input', `The chain knows no output ${ref} the transaction ${spentRefs.includes(ref) ? 'spends' : 'references'}`)
    if (output.consumedBy && output.consumedBy !== txHash) return refuse('input_spent', `Output ${ref} was spent already, by transaction ${output.consumedBy}`)
    if (spentRefs.includes(ref)) spent.set(ref, output)
  }
  return { spent }
}

/** Every spent output must be locked by a payment key: a script-locked or Byron output is no plain transfer. */
function ownershipProblem(spent: Map<string, ChainOutputView>): Refusal | undefined {
  for (const [ref, output] of spent) {
    const credential = paymentCredentialOf(output.address)
    if (credential?.type !== 'key') {
      return refuse('forbidden_content', `A payment spends outputs locked by payment keys, but ${ref} is at ${output.address}, ${credential ? 'locked by a script' : 'not a Shelley key address'}`)
    }
  }
  return undefined
}

const valueOfOutput = (output: ChainOutputView): Value => ({ coin: BigInt(output.lovelace), assets: new Map(output.assets.map(asset => [asset.unit, BigInt(asset.quantity)])) })

function conservationProblem(body: CSL.TransactionBody, spent: Map<string, ChainOutputView>): Refusal | undefined {
  const consumed = sumValues([...spent.values()].map(valueOfOutput))
  const produced = addValue(sumValues(listOf(body.outputs()).map(output => fromCslValue(output.amount()))), lovelace(BigInt(body.fee().to_str())))
  if (valuesEqual(consumed, produced)) return undefined
  return refuse('value_not_conserved', `The inputs hold ${describeValue(consumed)}, but the outputs and the fee come to ${describeValue(produced)}`)
}

async function signatureProblem(tx: CSL.FixedTransaction, txHash: string, spent: Map<string, ChainOutputView>): Promise<Refusal | undefined> {
  const verification = await verifySignedTransaction(tx.to_hex(), { expectedBodyHash: txHash, inputOwners: ref => spent.get(ref)?.address })
  if (verification.invalidSignatures.length) {
    return refuse('invalid_signature', `The signature of key ${verification.invalidSignatures[0]} does not verify over transaction ${txHash}`)
  }
  if (verification.missingSigners.length) {
    const missing = verification.missingSigners[0]
    return refuse('missing_signature', `The transaction lacks a valid signature of key ${missing.keyHash}, needed for ${missing.neededFor}`)
  }
  if (!verification.valid) return refuse('missing_signature', `The transaction is not fully signed: ${verification.problems.join('; ')}`)
  return undefined
}
