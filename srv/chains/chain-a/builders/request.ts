import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { badInput } from '../../../lib/errors.ts'
import { byteStringContent, isShallowCbor } from '../cbor.ts'
import { datumHashOf, narrowest, parsePaymentAddress, paymentCredentialOf, paymentKeyHash, refOf, requiredTimeLocks } from '../csl.ts'
import { parseCostModels, plutusScriptBytes } from '../plutus.ts'
import type { ChainProtocolParameters, ChainUtxo } from '../port.ts'
import { valueOfUtxo } from '../value.ts'
import type { BuildRequest, MintRequest, PaymentRequest, Plan, PlannedMint, PlannedOutput, PlannedScriptInput, PlanParameters, ScriptSpendRequest } from './types.ts'

/**
 * The request, checked and put into the form the builder works with: amounts as bigints, scripts,
 * datums and metadata as CBOR, the validity interval settled, the spendable UTxOs chosen. Every
 * problem with the request is a 400 ApiError naming the parameter.
 */

/** The default validity: two hours from the current slot. */
const DEFAULT_VALIDITY_MS = 2 * 60 * 60 * 1000

export function planOf(request: BuildRequest): Plan {
  const networkId = request.networkId
  const mints = (request.mint ?? []).map((mint, i) => parseMint(mint, `mint/${i}`))
  const scriptInputs = (request.scriptInputs ?? []).map((input, i) => parseScriptInput(input, networkId, `scriptInputs/${i}`))
  const excluded = new Set((request.excludedUtxos ?? []).map(refOf))
  const spentByScripts = new Set(scriptInputs.map(input => refOf(input.utxo)))
  const spendable = request.utxos.filter(utxo => isKeyLocked(utxo.address) && !utxo.referenceScriptHash && !spentByScripts.has(refOf(utxo)) && hasShallowDatum(utxo))
  return {
    params: parametersOf(request.protocolParameters),
    networkId,
    slotConfig: request.slotConfig,
    changeAddress: parsePaymentAddress(request.changeAddress, networkId, 'changeAddress'),
    outputs: (request.outputs ?? []).map((output, i) => parseOutput(output, networkId, `outputs/${i}`)),
    mints: mergeMints(mints),
    metadata: request.metadataJson === undefined || request.metadataJson === null ? null : parseMetadata(request.metadataJson),
    scriptInputs,
    validity: validityOf(request, mints),
    requiredSigners: (request.requiredSigners ?? []).map((hash, i) => parseKeyHash(hash, `requiredSigners/${i}`)),
    candidates: spendable.filter(utxo => !excluded.has(refOf(utxo))),
    excludedCount: spendable.filter(utxo => excluded.has(refOf(utxo))).length,
  }
}

function parametersOf(p: ChainProtocolParameters): PlanParameters {
  return {
    minFeeA: BigInt(p.minFeeA),
    minFeeB: BigInt(p.minFeeB),
    coinsPerUtxoByte: BigInt(p.coinsPerUtxoSize),
    maxTxSize: p.maxTxSize,
    maxValSize: Number(p.maxValSize ?? 5000),
    keyDeposit: BigInt(p.keyDeposit),
    poolDeposit: BigInt(p.poolDeposit),
    priceMem: p.priceMem ?? 0,
    priceStep: p.priceStep ?? 0,
    maxTxExUnits: { mem: Number(p.maxTxExMem ?? 0), steps: Number(p.maxTxExSteps ?? 0) },
    minFeeRefScriptCostPerByte: p.minFeeRefScriptCostPerByte ?? 0,
    collateralPercent: p.collateralPercent ?? 150,
    maxCollateralInputs: p.maxCollateralInputs ?? 3,
    costModels: parseCostModels(p.costModels),
  }
}

// ---- addresses, amounts, assets ------------------------------------------------------------

const isKeyLocked = (address: string) => paymentKeyHash(address) !== null

function parseAmount(value: unknown, target: string, { allowNegative = false, allowZero = true } = {}): bigint {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof text !== 'string' || !/^-?\d{1,20}$/.test(text.trim())) throw badInput('INVALID_VALUE', `'${clip(String(value))}' is not an integer amount`, target)
  const amount = BigInt(text.trim())
  if ((amount < 0n && !allowNegative) || (amount === 0n && !allowZero)) {
    throw badInput('INVALID_VALUE', `${amount} is not allowed here: expected a ${allowNegative ? 'non-zero' : allowZero ? 'non-negative' : 'positive'} integer`, target)
  }
  return amount
}

function parseAssets(assets: PaymentRequest['assets'], target: string): Map<string, bigint> {
  const result = new Map<string, bigint>()
  ;(assets ?? []).forEach((asset, i) => {
    const unit = typeof asset?.unit === 'string' ? asset.unit.toLowerCase() : ''
    if (!/^[0-9a-f]{56}([0-9a-f]{2}){0,32}$/.test(unit)) throw badInput('INVALID_ASSET_UNIT', `'${clip(String(asset?.unit))}' is not an asset unit (policy id and asset name, hex)`, `${target}/${i}/unit`)
    result.set(unit, (result.get(unit) ?? 0n) + parseAmount(asset.quantity, `${target}/${i}/quantity`, { allowZero: false }))
  })
  return result
}

function parseOutput(output: PaymentRequest, networkId: number, target: string): PlannedOutput {
  const datum = output.datumJson === undefined || output.datumJson === null ? null
    : { cbor: parsePlutusData(output.datumJson, `${target}/datumJson`), inline: output.datumInline !== false }
  return {
    address: parsePaymentAddress(output.address, networkId, `${target}/address`),
    lovelace: output.lovelace === undefined || output.lovelace === null ? null : parseAmount(output.lovelace, `${target}/lovelace`),
    assets: parseAssets(output.assets, `${target}/assets`),
    datum,
  }
}

function parseKeyHash(value: unknown, target: string): string {
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{56}$/.test(value)) throw badInput('INVALID_VALUE', `'${clip(String(value))}' is not a key hash (56 hexadecimal characters)`, target)
  return value.toLowerCase()
}

// ---- Plutus data and scripts ---------------------------------------------------------------

/** PlutusData JSON in cardano-cli's detailed schema, answered as CBOR hex. */
function parsePlutusData(json: unknown, target: string): string {
  try {
    const text = typeof json === 'string' ? json : JSON.stringify(json)
    return CSL.PlutusData.from_json(text, CSL.PlutusDatumSchema.DetailedSchema).to_hex()
  } catch (error) {
    throw badInput('INVALID_PLUTUS_DATA', `Not PlutusData in the detailed JSON schema ({"int":…}, {"bytes":…}, {"constructor":…,"fields":[…]}, {"list":[…]}, {"map":[{"k":…,"v":…}]}): ${reason(error)}`, target)
  }
}

/**
 * Anyone can send an output with any inline datum to any address. One nested beyond what CSL parses
 * safely is never selected: it would exhaust CSL's stack and break it for every later build.
 */
const hasShallowDatum = (utxo: ChainUtxo) => !utxo.inlineDatum || isShallowCbor(utxo.inlineDatum)

/** A Plutus V3 validator from its CBOR hex (one or two byte-string wrappers). */
export function parseValidator(hex: unknown, target: string): { script: Uint8Array; hash: string } {
  const bytes = typeof hex === 'string' && /^([0-9a-fA-F]{2})+$/.test(hex) ? plutusScriptBytes(new Uint8Array(Buffer.from(hex, 'hex'))) : null
  if (!bytes) throw badInput('INVALID_SCRIPT', 'The validator must be the CBOR hex of a Plutus script (as in cardano-cli\'s cborHex)', target)
  const program = byteStringContent(bytes)!
  if (program[0] !== 1 || program[1] !== 1 || program[2] !== 0) {
    throw badInput('INVALID_SCRIPT', `The validator is not a Plutus V3 script (UPLC 1.1.0); found version ${program.subarray(0, 3).join('.')}. Plutus V1 and V2 are not supported`, target)
  }
  return { script: bytes, hash: CSL.PlutusScript.new_v3(bytes).hash().to_hex() }
}

function parseScriptInput(input: ScriptSpendRequest, networkId: number, target: string): PlannedScriptInput {
  const utxo = input.utxo
  parsePaymentAddress(utxo?.address, networkId, `${target}/utxo/address`)
  if (utxo.referenceScriptHash) {
    // Conway charges for reference scripts in spent inputs too, by size, which the UTxO does not tell.
    throw badInput('INVALID_SCRIPT', `${refOf(utxo)} carries a reference script; the builders do not spend such outputs`, `${target}/utxo`)
  }
  if (!hasShallowDatum(utxo)) throw badInput('INVALID_PLUTUS_DATA', `The inline datum of ${refOf(utxo)} is nested too deeply to evaluate`, `${target}/utxo`)
  const { script, hash } = parseValidator(input.validator, `${target}/validator`)
  const payment = paymentCredentialOf(utxo.address)
  const locking = payment?.type === 'script' ? payment.hash : undefined
  if (locking !== hash) {
    throw badInput('INVALID_SCRIPT', `The validator's hash ${hash} is not the script that locks ${refOf(utxo)} (${locking ? `script ${locking}` : 'a key-locked address'})`, `${target}/validator`)
  }
  const redeemer = parsePlutusData(input.redeemerJson, `${target}/redeemerJson`)
  const datum = input.datumJson === undefined || input.datumJson === null ? null : parsePlutusData(input.datumJson, `${target}/datumJson`)
  let witnessDatum: string | null = null
  if (!utxo.inlineDatum && utxo.dataHash) {
    if (!datum) throw badInput('INVALID_PLUTUS_DATA', `${refOf(utxo)} carries only the hash of its datum (${utxo.dataHash}); datumJson is required`, `${target}/datumJson`)
    if (datumHashOf(datum) !== utxo.dataHash) {
      throw badInput('INVALID_PLUTUS_DATA', `The datum hashes to ${datumHashOf(datum)}, but ${refOf(utxo)} declares datum hash ${utxo.dataHash}`, `${target}/datumJson`)
    }
    witnessDatum = datum
  }
  return { utxo, value: valueOfUtxo(utxo), script, scriptHash: hash, redeemer, witnessDatum }
}

// ---- native scripts and minting ------------------------------------------------------------

/** A native script from cardano-cli's JSON (`sig`, `all`, `any`, `atLeast`, `after`, `before`) or CBOR hex. */
export function parseNativeScript(policy: unknown, target: string): CSL.NativeScript {
  const text = typeof policy === 'string' ? policy.trim() : ''
  try {
    if (/^([0-9a-fA-F]{2})+$/.test(text)) {
      if (!isShallowCbor(text)) throw new Error('not one well-formed CBOR item, or nested too deeply')
      return CSL.NativeScript.from_hex(text)
    }
    return nativeScriptOf(JSON.parse(text), 'policy')
  } catch (error) {
    throw badInput('INVALID_NATIVE_SCRIPT', `Not a native script (cardano-cli JSON or CBOR hex): ${reason(error)}`, target)
  }
}

/** A native script in cardano-cli's JSON, as the caller sent it: nothing is known about its fields yet. */
interface ScriptJson {
  type?: unknown
  keyHash?: unknown
  scripts?: unknown
  required?: unknown
  slot?: unknown
}

function nativeScriptOf(json: ScriptJson | null | undefined, path: string): CSL.NativeScript {
  const slot = (value: unknown) => {
    if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Error(`${path}.slot must be a non-negative integer`)
    return CSL.BigNum.from_str(String(value))
  }
  const children = () => {
    if (!Array.isArray(json?.scripts)) throw new Error(`${path}.scripts must be an array`)
    const list = CSL.NativeScripts.new()
    json.scripts.forEach((child: ScriptJson, i: number) => list.add(nativeScriptOf(child, `${path}.scripts[${i}]`)))
    return list
  }
  switch (json?.type) {
    case 'sig':
      if (typeof json.keyHash !== 'string' || !/^[0-9a-fA-F]{56}$/.test(json.keyHash)) throw new Error(`${path}.keyHash must be a key hash (56 hex characters)`)
      return CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(CSL.Ed25519KeyHash.from_hex(json.keyHash)))
    case 'all': return CSL.NativeScript.new_script_all(CSL.ScriptAll.new(children()))
    case 'any': return CSL.NativeScript.new_script_any(CSL.ScriptAny.new(children()))
    case 'atLeast': {
      const scripts = children()
      const { required } = json
      if (typeof required !== 'number' || !Number.isInteger(required) || required < 0 || required > scripts.len()) throw new Error(`${path}.required must be an integer from 0 to the number of scripts`)
      return CSL.NativeScript.new_script_n_of_k(CSL.ScriptNOfK.new(required, scripts))
    }
    case 'after': return CSL.NativeScript.new_timelock_start(CSL.TimelockStart.new_timelockstart(slot(json.slot)))
    case 'before': return CSL.NativeScript.new_timelock_expiry(CSL.TimelockExpiry.new_timelockexpiry(slot(json.slot)))
    default: throw new Error(`${path}.type must be one of sig, all, any, atLeast, after, before`)
  }
}

function parseMint(mint: MintRequest, target: string): PlannedMint & { native: CSL.NativeScript } {
  const native = parseNativeScript(mint?.policy, `${target}/policy`)
  const policyId = native.hash().to_hex()
  if (!Array.isArray(mint.assets) || mint.assets.length === 0) throw badInput('INVALID_VALUE', 'A mint needs at least one asset', `${target}/assets`)
  const assets = new Map<string, bigint>()
  mint.assets.forEach((asset, i) => {
    const name = typeof asset?.assetName === 'string' ? asset.assetName.toLowerCase() : ''
    if (!/^([0-9a-f]{2}){0,32}$/.test(name)) throw badInput('INVALID_ASSET_UNIT', `'${clip(String(asset?.assetName))}' is not an asset name (hex, at most 32 bytes)`, `${target}/assets/${i}/assetName`)
    assets.set(name, (assets.get(name) ?? 0n) + parseAmount(asset.quantity, `${target}/assets/${i}/quantity`, { allowNegative: true, allowZero: false }))
  })
  return { policyId, script: native.to_hex(), assets, native }
}

function mergeMints(mints: PlannedMint[]): PlannedMint[] {
  const byPolicy = new Map<string, PlannedMint>()
  for (const mint of mints) {
    const merged = byPolicy.get(mint.policyId) ?? { policyId: mint.policyId, script: mint.script, assets: new Map() }
    for (const [name, quantity] of mint.assets) merged.assets.set(name, (merged.assets.get(name) ?? 0n) + quantity)
    byPolicy.set(mint.policyId, merged)
  }
  return [...byPolicy.values()]
    .map(mint => ({ ...mint, assets: new Map([...mint.assets].filter(([, q]) => q !== 0n)) }))
    .filter(mint => mint.assets.size > 0)
}

/**
 * The default validity interval is narrowed to the time locks the mint policies require, so a
 * policy with `before` or `after` can mint.
 */
function validityOf(request: BuildRequest, mints: { native: CSL.NativeScript }[]) {
  const slots = Math.ceil(DEFAULT_VALIDITY_MS / request.slotConfig.slotLengthMs)
  const defaults = { invalidBefore: BigInt(request.currentSlot), invalidHereafter: BigInt(request.currentSlot + slots) }
  const locked = narrowest([defaults, ...mints.map(mint => requiredTimeLocks(mint.native))])
  const given = request.validity ?? {}
  const invalidBefore = given.invalidBefore !== undefined ? given.invalidBefore : Number(locked.invalidBefore)
  const invalidHereafter = given.invalidHereafter !== undefined ? given.invalidHereafter : Number(locked.invalidHereafter)
  for (const [name, slot] of [['invalidBefore', invalidBefore], ['invalidHereafter', invalidHereafter]] as const) {
    if (slot !== null && (!Number.isSafeInteger(slot) || slot < 0)) throw badInput('INVALID_VALIDITY_INTERVAL', `${name} must be a slot number`, `validity/${name}`)
  }
  if (invalidBefore !== null && invalidHereafter !== null && invalidBefore >= invalidHereafter) {
    throw badInput('INVALID_VALIDITY_INTERVAL', `The validity interval is empty: invalidBefore ${invalidBefore} is not before invalidHereafter ${invalidHereafter}`, 'validity')
  }
  return { invalidBefore, invalidHereafter }
}

// ---- metadata ------------------------------------------------------------------------------

const MAX_LABEL = 2n ** 64n - 1n

/**
 * Metadata as a JSON object keyed by numeric labels. Values follow the node's JSON mapping: strings
 * (at most 64 bytes; `0x…` for bytes), integers, lists and objects. Label 674 must be a CIP-20
 * message: `{"msg": ["line", …]}`.
 */
function parseMetadata(json: unknown): string {
  let value: unknown
  try {
    value = typeof json === 'string' ? JSON.parse(json) : json
  } catch (error) {
    throw badInput('INVALID_METADATA', `metadataJson is not JSON: ${reason(error)}`, 'metadataJson')
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw badInput('INVALID_METADATA', 'metadataJson must be a JSON object keyed by numeric labels', 'metadataJson')
  const metadata = CSL.GeneralTransactionMetadata.new()
  for (const [label, datum] of Object.entries(value)) {
    if (!/^\d{1,20}$/.test(label) || BigInt(label) > MAX_LABEL) throw badInput('INVALID_METADATA', `'${clip(label)}' is not a metadata label (an unsigned 64-bit integer)`, `metadataJson/${clip(label)}`)
    if (label === '674') assertCip20(datum)
    try {
      metadata.insert(CSL.BigNum.from_str(label), CSL.encode_json_str_to_metadatum(JSON.stringify(datum), CSL.MetadataJsonSchema.BasicConversions))
    } catch (error) {
      throw badInput('INVALID_METADATA', `The value under label ${label} is not valid metadata (strings at most 64 bytes, integers, lists, objects): ${reason(error)}`, `metadataJson/${label}`)
    }
  }
  return metadata.to_hex()
}

function assertCip20(datum: unknown) {
  const lines = (datum as { msg?: unknown } | null)?.msg
  const valid = Array.isArray(lines) && lines.length > 0 && lines.every((line: unknown) => typeof line === 'string' && Buffer.byteLength(line) <= 64)
  if (!valid) throw badInput('INVALID_METADATA', 'Label 674 holds a CIP-20 message: {"msg": ["…"]}, each line a string of at most 64 bytes', 'metadataJson/674')
}

// ---- helpers -------------------------------------------------------------------------------

const clip = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text)

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))
