import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiError, badInput } from '../../lib/errors.ts'
import type { Value } from './value.ts'

/**
 * What chain A's code does with CSL objects, in one place: lists, output references, addresses
 * and credentials, values, outputs, native scripts and the transaction builder's configuration
 * from protocol parameters.
 */

// ---- lists ---------------------------------------------------------------------------------

/** The items of a CSL collection (`len()` and `get(i)`); none for an absent one. */
export function listOf<T>(collection: { len(): number; get(i: number): T } | undefined): T[] {
  return collection ? Array.from({ length: collection.len() }, (_, i) => collection.get(i)) : []
}

export const bigNum = (value: bigint | number | string) => CSL.BigNum.from_str(String(value))

const bigintOf = (value: CSL.BigNum) => BigInt(value.to_str())

// ---- output references ---------------------------------------------------------------------

export interface OutputRef {
  txHash: string
  outputIndex: number
}

/** `<tx hash>#<index>`, the text form of an output reference. */
export const refOf = (ref: OutputRef) => `${ref.txHash}#${ref.outputIndex}`

export const outputRefOf = (input: CSL.TransactionInput): OutputRef => ({ txHash: input.transaction_id().to_hex(), outputIndex: input.index() })

export const refOfInput = (input: CSL.TransactionInput) => refOf(outputRefOf(input))

export function parseRef(ref: string): OutputRef {
  const [txHash, index] = ref.split('#')
  return { txHash, outputIndex: Number(index) }
}

export function transactionInput(ref: OutputRef | string): CSL.TransactionInput {
  const { txHash, outputIndex } = typeof ref === 'string' ? parseRef(ref) : ref
  return CSL.TransactionInput.new(CSL.TransactionHash.from_hex(txHash), outputIndex)
}

/** The ledger's order of inputs (by transaction hash, then index): a spend redeemer's index points into it. */
export function compareRefs(a: string, b: string): number {
  const [refA, refB] = [parseRef(a), parseRef(b)]
  return refA.txHash === refB.txHash ? refA.outputIndex - refB.outputIndex : refA.txHash < refB.txHash ? -1 : 1
}

export const sortedRefs = (refs: string[]) => [...refs].sort(compareRefs)

// ---- addresses and credentials -------------------------------------------------------------

/** 1 for mainnet, 0 for every test network (preprod, preview, the devnets). */
export const networkIdOf = (network: string) => (network === 'mainnet' ? 1 : 0)

const MAINNET_PROTOCOL_MAGIC = 764824073

/** An address in text form: bech32 (`addr…`, `stake…`) or Byron base58; undefined when malformed. */
export function decodeAddress(text: string): CSL.Address | undefined {
  try {
    if (/^(addr|stake)(_test)?1/.test(text)) return CSL.Address.from_bech32(text)
    return CSL.ByronAddress.is_valid(text) ? CSL.ByronAddress.from_base58(text).to_address() : undefined
  } catch {
    return undefined
  }
}

/** An address known to be well-formed (from the chain or from a checked request) as a CSL object. */
export function cslAddress(text: string): CSL.Address {
  const address = decodeAddress(text)
  if (!address) throw new Error(`'${clip(text)}' is not an address`)
  return address
}

/** Text form of an address: bech32 for Shelley addresses, base58 for Byron ones. */
export const addressText = (address: CSL.Address) => CSL.ByronAddress.from_address(address)?.to_base58() ?? address.to_bech32()

/** The network an address is for: 1 mainnet, 0 a test network (a Byron address tells by its protocol magic). */
export function addressNetworkId(address: CSL.Address): number {
  const byron = CSL.ByronAddress.from_address(address)
  if (byron) return byron.byron_protocol_magic() === MAINNET_PROTOCOL_MAGIC ? 1 : 0
  return address.network_id()
}

const networkName = (networkId: number) => (networkId === 1 ? 'mainnet' : 'a test network')

/** WRONG_NETWORK for an address of another network than the deployment's; undefined when it is on it. */
export function networkMismatch(address: CSL.Address, text: string, networkId: number, target?: string): ApiError | undefined {
  const actual = addressNetworkId(address)
  if (actual === networkId) return undefined
  return badInput('WRONG_NETWORK', `'${clip(text)}' belongs to ${networkName(actual)}, but this deployment serves ${networkName(networkId)}`, target)
}

interface AddressKind {
  prefix: RegExp
  fits: (address: CSL.Address) => boolean
  code: string
  description: string
}

const PAYMENT_ADDRESS: AddressKind = {
  prefix: /^addr(_test)?1/,
  fits: address => address.kind() !== CSL.AddressKind.Reward && address.kind() !== CSL.AddressKind.Malformed,
  code: 'INVALID_ADDRESS',
  description: 'a bech32 payment address (addr1… or addr_test1…)',
}

const REWARD_ADDRESS: AddressKind = {
  prefix: /^stake(_test)?1/,
  fits: address => address.kind() === CSL.AddressKind.Reward,
  code: 'INVALID_STAKE_ADDRESS',
  description: 'a bech32 stake address (stake1… or stake_test1…)',
}

function parseAddressOfKind(kind: AddressKind, value: unknown, networkId: number, target: string): string {
  const text = typeof value === 'string' ? value.trim() : ''
  const address = kind.prefix.test(text) ? decodeAddress(text) : undefined
  if (!address || !kind.fits(address)) throw badInput(kind.code, `'${clip(String(value ?? ''))}' is not ${kind.description}`, target)
  const mismatch = networkMismatch(address, text, networkId, target)
  if (mismatch) throw mismatch
  return text
}

/** A payment address (bech32 `addr…`/`addr_test…`) of the deployment's network; INVALID_ADDRESS or WRONG_NETWORK otherwise. */
export const parsePaymentAddress = (value: unknown, networkId: number, target: string) => parseAddressOfKind(PAYMENT_ADDRESS, value, networkId, target)

/** A stake (reward) address (bech32 `stake…`/`stake_test…`) of the deployment's network; INVALID_STAKE_ADDRESS or WRONG_NETWORK otherwise. */
export const parseRewardAddress = (value: unknown, networkId: number, target: string) => parseAddressOfKind(REWARD_ADDRESS, value, networkId, target)

/** A payment or stake credential: the hash of a verification key or of a script. */
export interface Credential {
  type: 'key' | 'script'
  hash: string
}

export function credentialOf(credential: CSL.Credential): Credential {
  const key = credential.to_keyhash()
  return key ? { type: 'key', hash: key.to_hex() } : { type: 'script', hash: credential.to_scripthash()!.to_hex() }
}

/** The payment credential of an address (object or text); null for Byron and malformed addresses. */
export function paymentCredentialOf(address: CSL.Address | string): Credential | null {
  const decoded = typeof address === 'string' ? decodeAddress(address) : address
  const credential = decoded?.payment_cred()
  return credential ? credentialOf(credential) : null
}

/** The payment key hash of a key-locked address; null for a script address or anything else. */
export function paymentKeyHash(address: string): string | null {
  const credential = paymentCredentialOf(address)
  return credential?.type === 'key' ? credential.hash : null
}

// ---- values and outputs --------------------------------------------------------------------

const assetNameHex = (name: CSL.AssetName) => Buffer.from(name.name()).toString('hex')

export function toCslValue(value: Value): CSL.Value {
  const result = CSL.Value.new(bigNum(value.coin))
  if (value.assets.size === 0) return result
  const multiasset = CSL.MultiAsset.new()
  for (const [unit, quantity] of value.assets) {
    multiasset.set_asset(CSL.ScriptHash.from_hex(unit.slice(0, 56)), CSL.AssetName.new(Buffer.from(unit.slice(56), 'hex')), bigNum(quantity))
  }
  result.set_multiasset(multiasset)
  return result
}

/** The quantities of a multi-asset by unit, added to `into`. */
export function fromCslMultiAsset(multiasset: CSL.MultiAsset | undefined, into = new Map<string, bigint>()): Map<string, bigint> {
  for (const policy of listOf(multiasset?.keys())) {
    const assets = multiasset!.get(policy)!
    for (const name of listOf(assets.keys())) {
      const unit = policy.to_hex() + assetNameHex(name)
      into.set(unit, (into.get(unit) ?? 0n) + bigintOf(assets.get(name)!))
    }
  }
  return into
}

export const fromCslValue = (value: CSL.Value): Value => ({ coin: bigintOf(value.coin()), assets: fromCslMultiAsset(value.multiasset()) })

/** Minted (positive) and burned (negative) quantities by unit. */
export function fromCslMint(mint: CSL.Mint | undefined): Map<string, bigint> {
  const result = new Map<string, bigint>()
  if (!mint) return result
  fromCslMultiAsset(mint.as_positive_multiasset(), result)
  for (const [unit, quantity] of fromCslMultiAsset(mint.as_negative_multiasset())) {
    const total = (result.get(unit) ?? 0n) - quantity
    if (total === 0n) result.delete(unit)
    else result.set(unit, total)
  }
  return result
}

/** What an output holds, in plain form; hex for the datum and the reference script. */
interface OutputSpec {
  address: string
  value: Value
  inlineDatum?: string | null
  dataHash?: string | null
  /** CBOR of the output's script_ref, hex. */
  referenceScript?: string | null
}

export function toCslOutput(output: OutputSpec): CSL.TransactionOutput {
  const result = CSL.TransactionOutput.new(cslAddress(output.address), toCslValue(output.value))
  if (output.inlineDatum) result.set_plutus_data(CSL.PlutusData.from_hex(output.inlineDatum))
  else if (output.dataHash) result.set_data_hash(CSL.DataHash.from_hex(output.dataHash))
  if (output.referenceScript) result.set_script_ref(CSL.ScriptRef.from_hex(output.referenceScript))
  return result
}

/** The key hash of each vkey witness and whether its signature verifies against the body hash. */
export const checkedVkeyWitnesses = (witnesses: CSL.Vkeywitnesses | undefined, bodyHash: Uint8Array) =>
  listOf(witnesses).map(witness => {
    const key = witness.vkey().public_key()
    return { keyHash: key.hash().to_hex(), valid: key.verify(bodyHash, witness.signature()) }
  })

export const datumHashOf = (cbor: string) => CSL.hash_plutus_data(CSL.PlutusData.from_hex(cbor)).to_hex()

/** Metadata as JSON text the way chain indexers show it (bytes as 0x-hex), or in the detailed schema when maps have non-text keys. */
export function metadatumJson(datum: CSL.TransactionMetadatum): string {
  try {
    return CSL.decode_metadatum_to_json_str(datum, CSL.MetadataJsonSchema.BasicConversions)
  } catch {
    return CSL.decode_metadatum_to_json_str(datum, CSL.MetadataJsonSchema.DetailedSchema)
  }
}

// ---- native scripts ------------------------------------------------------------------------

const { ScriptPubkey, ScriptAll, ScriptAny, ScriptNOfK, TimelockStart, TimelockExpiry } = CSL.NativeScriptKind

/** The scripts under an `all`, `any` or `atLeast`; none for the others. */
function nestedScripts(script: CSL.NativeScript): CSL.NativeScript[] {
  const nested = script.as_script_all()?.native_scripts() ?? script.as_script_any()?.native_scripts() ?? script.as_script_n_of_k()?.native_scripts()
  return listOf(nested)
}

const startSlot = (script: CSL.NativeScript) => bigintOf(script.as_timelock_start()!.slot_bignum())
const expirySlot = (script: CSL.NativeScript) => bigintOf(script.as_timelock_expiry()!.slot_bignum())

/** Key hashes a native script may need signatures from (every `sig`, wherever it is). */
export function nativeScriptSigners(script: CSL.NativeScript): string[] {
  if (script.kind() === ScriptPubkey) return [script.as_script_pubkey()!.addr_keyhash().to_hex()]
  return nestedScripts(script).flatMap(nativeScriptSigners)
}

/** A validity interval in slots; null where it is open. */
interface ValidityInterval {
  invalidBefore: bigint | null
  invalidHereafter: bigint | null
}

/**
 * The time locks a script requires whatever else is signed: those at the top or under `all`, as
 * the latest `after` and the earliest `before`.
 */
export function requiredTimeLocks(script: CSL.NativeScript): ValidityInterval {
  switch (script.kind()) {
    case TimelockStart: return { invalidBefore: startSlot(script), invalidHereafter: null }
    case TimelockExpiry: return { invalidBefore: null, invalidHereafter: expirySlot(script) }
    case ScriptAll: return narrowest(nestedScripts(script).map(requiredTimeLocks))
    default: return { invalidBefore: null, invalidHereafter: null }
  }
}

/** The interval within all of the given ones: the latest start, the earliest end. */
export function narrowest(intervals: ValidityInterval[]): ValidityInterval {
  const starts = intervals.flatMap(i => (i.invalidBefore === null ? [] : [i.invalidBefore]))
  const ends = intervals.flatMap(i => (i.invalidHereafter === null ? [] : [i.invalidHereafter]))
  return {
    invalidBefore: starts.length ? starts.reduce((a, b) => (a > b ? a : b)) : null,
    invalidHereafter: ends.length ? ends.reduce((a, b) => (a < b ? a : b)) : null,
  }
}

/** Allegra timelock semantics: time locks are judged against the transaction's validity interval. */
export function nativeScriptSatisfied(script: CSL.NativeScript, signers: Set<string>, interval: ValidityInterval): boolean {
  const nested = () => nestedScripts(script).map(inner => nativeScriptSatisfied(inner, signers, interval))
  switch (script.kind()) {
    case ScriptPubkey: return signers.has(script.as_script_pubkey()!.addr_keyhash().to_hex())
    case ScriptAll: return nested().every(Boolean)
    case ScriptAny: return nested().some(Boolean)
    case ScriptNOfK: return nested().filter(Boolean).length >= script.as_script_n_of_k()!.n()
    case TimelockStart: return interval.invalidBefore !== null && startSlot(script) <= interval.invalidBefore
    case TimelockExpiry: return interval.invalidHereafter !== null && interval.invalidHereafter <= expirySlot(script)
    default: return false
  }
}

// ---- Plutus languages and the builder's configuration --------------------------------------

export type PlutusLanguage = 'PlutusV1' | 'PlutusV2' | 'PlutusV3'

/** Cost model parameters per language, in the on-chain (canonical) order. */
export type CostModels = Partial<Record<PlutusLanguage, number[]>>

const LANGUAGES: Record<PlutusLanguage, () => CSL.Language> = {
  PlutusV1: () => CSL.Language.new_plutus_v1(), PlutusV2: () => CSL.Language.new_plutus_v2(), PlutusV3: () => CSL.Language.new_plutus_v3(),
}

const LANGUAGE_NAMES: Record<CSL.LanguageKind, PlutusLanguage> = {
  [CSL.LanguageKind.PlutusV1]: 'PlutusV1', [CSL.LanguageKind.PlutusV2]: 'PlutusV2', [CSL.LanguageKind.PlutusV3]: 'PlutusV3',
}

export const languageOf = (language: CSL.Language): PlutusLanguage => LANGUAGE_NAMES[language.kind()]

export function cslCostModels(costModels: CostModels): CSL.Costmdls {
  const models = CSL.Costmdls.new()
  for (const [name, costs] of Object.entries(costModels) as [PlutusLanguage, number[] | undefined][]) {
    if (!costs) continue
    const model = CSL.CostModel.new()
    costs.forEach((cost, index) => model.set(index, CSL.Int.from_str(String(cost))))
    models.insert(LANGUAGES[name](), model)
  }
  return models
}

/** A non-negative rational, exact for decimal numbers such as the prices 0.0577 and 0.0000721. */
interface Rational {
  numerator: bigint
  denominator: bigint
}

export function rationalOf(value: number): Rational {
  const [mantissa, exponentText] = value.toExponential().split('e')
  const [whole, fraction = ''] = mantissa.split('.')
  const exponent = Number(exponentText) - fraction.length
  const digits = BigInt(whole + fraction)
  return exponent >= 0
    ? { numerator: digits * 10n ** BigInt(exponent), denominator: 1n }
    : { numerator: digits, denominator: 10n ** BigInt(-exponent) }
}

function unitInterval(value: number): CSL.UnitInterval {
  const { numerator, denominator } = rationalOf(value)
  return CSL.UnitInterval.new(bigNum(numerator), bigNum(denominator))
}

/** The protocol parameters CSL's transaction builder works with. */
interface BuilderParameters {
  minFeeA: bigint | number
  minFeeB: bigint | number
  coinsPerUtxoByte: bigint | number
  keyDeposit: bigint | number
  poolDeposit: bigint | number
  maxValSize: number
  maxTxSize: number
  priceMem: number
  priceStep: number
  minFeeRefScriptCostPerByte: number
}

/** CSL's transaction builder configuration from protocol parameters: fees, deposits, sizes, prices. */
export function transactionBuilderConfig(params: BuilderParameters): CSL.TransactionBuilderConfig {
  return CSL.TransactionBuilderConfigBuilder.new()
    .fee_algo(CSL.LinearFee.new(bigNum(params.minFeeA), bigNum(params.minFeeB)))
    .coins_per_utxo_byte(bigNum(params.coinsPerUtxoByte))
    .pool_deposit(bigNum(params.poolDeposit))
    .key_deposit(bigNum(params.keyDeposit))
    .max_value_size(params.maxValSize)
    .max_tx_size(params.maxTxSize)
    .ex_unit_prices(CSL.ExUnitPrices.new(unitInterval(params.priceMem), unitInterval(params.priceStep)))
    .ref_script_coins_per_byte(unitInterval(params.minFeeRefScriptCostPerByte))
    .build()
}

const clip = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}...` : text)
