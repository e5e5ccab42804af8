import type { MintRequest, PaymentRequest } from '../chains/chain-a/builders/index.ts'
import { parseNativeScript } from '../chains/chain-a/builders/request.ts'
import { parseAddress, parseAssetUnit, parseOutputIndex, parseTxHash } from '../chains/chain-a/identifiers.ts'
import type { AssetQuantity } from '../chains/chain-a/port.ts'
import { badInput } from '../lib/errors.ts'
import type { BuildKind } from './states.ts'

/**
 * The build actions' parameters, checked and turned into what a builder needs. The parameters are
 * kept as given (`requestJson`), so a failed or expired build can be built again.
 */

export interface BuildParameters {
  senderAddress?: string | null
  recipientAddress?: string | null
  lovelaceAmount?: string | null
  changeAddress?: string | null
  datumJson?: string | null
  assetsJson?: string | null
  mintActionsJson?: string | null
  mintingPolicyScript?: string | null
  metadataJson?: string | null
  message?: string | null
  validatorScript?: string | null
  scriptTxHash?: string | null
  scriptOutputIndex?: number | null
  redeemerJson?: string | null
}

export interface PlannedBuild {
  sender: string
  recipient: string | null
  change: string
  lovelaceAmount: string | null
  outputs: PaymentRequest[]
  mint: MintRequest[]
  metadataJson?: string
  scriptSpend?: { txHash: string; outputIndex: number; validator: string; redeemerJson: string; datumJson?: string }
}

/** CIP-20 messages are split into strings of at most 64 bytes. */
const CIP20_CHUNK_BYTES = 64

export function planBuild(kind: BuildKind, p: BuildParameters, network: string): PlannedBuild {
  const sender = parseAddress(p.senderAddress, network, 'senderAddress')
  const change = p.changeAddress ? parseAddress(p.changeAddress, network, 'changeAddress') : sender
  const recipient = p.recipientAddress ? parseAddress(p.recipientAddress, network, 'recipientAddress') : null
  const lovelaceAmount = p.lovelaceAmount === undefined || p.lovelaceAmount === null || p.lovelaceAmount === '' ? null : parseLovelace(p.lovelaceAmount)
  const plan: PlannedBuild = { sender, recipient, change, lovelaceAmount, outputs: [], mint: [] }
  const pay = (address: string, assets: AssetQuantity[] = [], datumJson?: string) =>
    plan.outputs.push({ address, lovelace: lovelaceAmount ?? undefined, assets, ...(datumJson ? { datumJson } : {}) })

  switch (kind) {
    case 'ada':
      pay(required(recipient, 'recipientAddress'), [], p.datumJson ?? undefined)
      required(lovelaceAmount, 'lovelaceAmount')
      break
    case 'multiAsset':
      pay(required(recipient, 'recipientAddress'), parseAssets(p.assetsJson))
      break
    case 'mint': {
      const mint = parseMint(p.mintActionsJson, p.mintingPolicyScript)
      plan.mint.push(mint.request)
      if (mint.minted.length) pay(recipient ?? sender, mint.minted)
      plan.metadataJson = p.metadataJson ?? undefined
      break
    }
    case 'metadata':
      plan.metadataJson = metadataWithMessage(p.metadataJson, p.message)
      if (recipient) pay(recipient)
      break
    case 'plutusSpend':
      plan.scriptSpend = {
        txHash: parseTxHash(p.scriptTxHash, 'scriptTxHash'),
        outputIndex: parseOutputIndex(p.scriptOutputIndex, 'scriptOutputIndex'),
        validator: requiredText(p.validatorScript, 'validatorScript'),
        redeemerJson: requiredText(p.redeemerJson, 'redeemerJson'),
        datumJson: p.datumJson ?? undefined,
      }
      if (recipient) pay(recipient)
      break
  }
  return plan
}

function parseLovelace(value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') throw badInput('INVALID_AMOUNT', 'lovelaceAmount must be a whole number of lovelace as a string', 'lovelaceAmount')
  const text = String(value).trim()
  if (!/^\d{1,20}$/.test(text) || BigInt(text) <= 0n) throw badInput('INVALID_AMOUNT', `lovelaceAmount must be a positive whole number of lovelace, got '${text}'`, 'lovelaceAmount')
  return text
}

function parseJson(text: unknown, target: string, code: string): unknown {
  if (typeof text !== 'string' || !text.trim()) throw badInput(code, `${target} is required`, target)
  try {
    return JSON.parse(text)
  } catch (error) {
    throw badInput(code, `${target} is not valid JSON: ${(error as Error).message}`, target)
  }
}

/** `[{"unit":"<policy id><asset name hex>","quantity":"10"}]` */
function parseAssets(json: unknown): AssetQuantity[] {
  const assets = parseJson(json, 'assetsJson', 'INVALID_ASSETS')
  if (!Array.isArray(assets) || !assets.length) throw badInput('INVALID_ASSETS', 'assetsJson must be a non-empty array of {unit, quantity}', 'assetsJson')
  return assets.map((asset: { unit?: unknown; quantity?: unknown } | null, i) => {
    const unit = parseAssetUnit(asset?.unit, `assetsJson[${i}].unit`)
    const quantity = String(asset?.quantity ?? '')
    if (!/^\d{1,39}$/.test(quantity) || BigInt(quantity) <= 0n) throw badInput('INVALID_ASSETS', `assetsJson[${i}].quantity must be a positive whole number, got '${asset?.quantity}'`, 'assetsJson')
    return { unit, quantity }
  })
}

/**
 * `mintActionsJson`: `[{"assetName":"Coin" | "assetNameHex":"436f696e", "quantity":"100"}]` under the
 * policy `mintingPolicyScript` (cardano-cli native-script JSON or CBOR hex); negative quantities burn.
 */
function parseMint(json: unknown, policy: unknown): { request: MintRequest; minted: AssetQuantity[] } {
  const actions = parseJson(json, 'mintActionsJson', 'INVALID_MINT_ACTIONS')
  if (!Array.isArray(actions) || !actions.length) throw badInput('INVALID_MINT_ACTIONS', 'mintActionsJson must be a non-empty array of {assetName | assetNameHex, quantity}', 'mintActionsJson')
  const policyText = requiredText(policy, 'mintingPolicyScript')
  const policyId = parseNativeScript(policyText, 'mintingPolicyScript').hash().to_hex()
  const assets = actions.map((action: { assetName?: unknown; assetNameHex?: unknown; quantity?: unknown } | null, i) => {
    const assetName = typeof action?.assetNameHex === 'string' ? action.assetNameHex.toLowerCase() : Buffer.from(String(action?.assetName ?? ''), 'utf8').toString('hex')
    if (!/^([0-9a-f]{2}){0,32}$/.test(assetName)) throw badInput('INVALID_MINT_ACTIONS', `mintActionsJson[${i}] names an asset longer than 32 bytes or not in hex`, 'mintActionsJson')
    const quantity = String(action?.quantity ?? '')
    if (!/^-?\d{1,39}$/.test(quantity) || BigInt(quantity) === 0n) throw badInput('INVALID_MINT_ACTIONS', `mintActionsJson[${i}].quantity must be a non-zero whole number (negative burns), got '${action?.quantity}'`, 'mintActionsJson')
    return { assetName, quantity }
  })
  const minted = assets.filter(asset => BigInt(asset.quantity) > 0n).map(asset => ({ unit: policyId + asset.assetName, quantity: asset.quantity }))
  return { request: { policy: policyText, assets }, minted }
}

/** Merges a CIP-20 message (label 674, `{"msg": [...]}`) into the metadata. */
function metadataWithMessage(metadataJson: unknown, message: unknown): string {
  const metadata: Record<string, unknown> = metadataJson ? (parseJson(metadataJson, 'metadataJson', 'INVALID_METADATA') as Record<string, unknown>) : {}
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw badInput('INVALID_METADATA', 'metadataJson must be an object keyed by numeric label strings', 'metadataJson')
  if (typeof message === 'string' && message.length) metadata['674'] = { msg: chunks(message) }
  if (!Object.keys(metadata).length) throw badInput('INVALID_METADATA', 'Give a message (CIP-20) or metadataJson', 'metadataJson')
  return JSON.stringify(metadata)
}

function chunks(message: string): string[] {
  const parts: string[] = []
  let current = ''
  for (const character of message) {
    if (Buffer.byteLength(current + character) > CIP20_CHUNK_BYTES) {
      parts.push(current)
      current = ''
    }
    current += character
  }
  if (current) parts.push(current)
  return parts
}

function required<T>(value: T | null | undefined, target: string): T {
  if (value === null || value === undefined) throw badInput('MISSING_PARAMETER', `${target} is required`, target)
  return value
}

function requiredText(value: unknown, target: string): string {
  if (typeof value !== 'string' || !value.trim()) throw badInput('MISSING_PARAMETER', `${target} is required`, target)
  return value.trim()
}
