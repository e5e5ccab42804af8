import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { decodeAddress, metadatumJson } from './csl.ts'
import { plutusScriptBytes } from './plutus.ts'
import type * as Port from './port.ts'
import { assetList } from './value.ts'

/**
 * Pure mappings from Ogmios v6 JSON (chain synchronisation's blocks and transactions, ledger-state
 * queries) to the chain-A port types. Integers beyond 2^53 arrive as `bigint`, others as numbers.
 */

export type OgmiosInteger = number | bigint
export type OgmiosValue = { ada: { lovelace: OgmiosInteger } } & Record<string, Record<string, OgmiosInteger>>
export interface OgmiosPoint { slot: number; id: string }
export interface OgmiosTip extends OgmiosPoint { height?: number }
export interface OgmiosOutputReference { transaction: { id: string }; index: number }
export interface OgmiosScript { language: string; cbor?: string }
export interface OgmiosOutput {
  address: string
  value: OgmiosValue
  datumHash?: string
  datum?: string
  script?: OgmiosScript
}
export interface OgmiosDelegateRepresentative { type: 'registered' | 'abstain' | 'noConfidence'; id?: string; from?: 'verificationKey' | 'script' }
export interface OgmiosCertificate {
  type: string
  credential?: string
  from?: 'verificationKey' | 'script'
  stakePool?: { id: string }
  delegateRepresentative?: OgmiosDelegateRepresentative
  deposit?: { ada: { lovelace: OgmiosInteger } }
}
export interface OgmiosTransaction {
  id: string
  spends: 'inputs' | 'collaterals'
  inputs: OgmiosOutputReference[]
  references?: OgmiosOutputReference[]
  collaterals?: OgmiosOutputReference[]
  collateralReturn?: OgmiosOutput
  outputs: OgmiosOutput[]
  certificates?: OgmiosCertificate[]
  withdrawals?: Record<string, { ada: { lovelace: OgmiosInteger } }>
  fee?: { ada: { lovelace: OgmiosInteger } }
  validityInterval?: { invalidBefore?: OgmiosInteger; invalidAfter?: OgmiosInteger }
  mint?: Record<string, Record<string, OgmiosInteger>>
  metadata?: { hash: string; labels: Record<string, { json?: unknown; cbor?: string }> }
  redeemers?: unknown[]
  proposals?: { deposit?: { ada: { lovelace: OgmiosInteger } } }[]
  treasury?: { donation?: { ada: { lovelace: OgmiosInteger } } }
  cbor?: string
}
export interface OgmiosBlock {
  type: string
  era?: string
  id: string
  ancestor?: string
  height?: number
  slot?: number
  size?: { bytes: number }
  transactions?: OgmiosTransaction[]
  issuer?: { verificationKey?: string }
}
export interface OgmiosBound { time: { seconds: OgmiosInteger }; slot: OgmiosInteger; epoch: OgmiosInteger }
export interface OgmiosEraSummary {
  start: OgmiosBound
  end?: OgmiosBound | null
  parameters: { epochLength: OgmiosInteger; slotLength: { milliseconds: OgmiosInteger } }
}
export interface OgmiosRewardAccountSummary {
  credential?: string
  stakePool?: { id: string }
  delegateRepresentative?: OgmiosDelegateRepresentative
  rewards?: { ada: { lovelace: OgmiosInteger } }
}

const text = (value: OgmiosInteger | undefined | null): string | null => (value === undefined || value === null ? null : String(value))
const lovelaceOf = (amount: { ada: { lovelace: OgmiosInteger } } | undefined): bigint => BigInt(amount?.ada.lovelace ?? 0)

// ---- time ---------------------------------------------------------------------------------

/** Where a slot lies in the hard-fork history: its epoch, its slot within the epoch and its unix time (whole seconds). */
export interface SlotPlace {
  epoch: number
  epochSlot: number
  time: number
}

/** Slot ↔ time and epoch over the era summaries (`queryLedgerState/eraSummaries`) and the system start. */
export class SlotClock {
  private readonly eras: OgmiosEraSummary[]
  private readonly systemStartMs: number

  constructor(eras: OgmiosEraSummary[], systemStart: string) {
    // Empty eras (a network that forked past them at its start) hold no slot.
    const held = eras.filter(era => !era.end || Number(era.end.slot) > Number(era.start.slot))
    this.eras = held.length ? held : eras.slice(-1)
    this.systemStartMs = Date.parse(systemStart)
  }

  place(slot: number): SlotPlace {
    const era = [...this.eras].reverse().find(candidate => Number(candidate.start.slot) <= slot) ?? this.eras[0]
    const epochLength = Number(era.parameters.epochLength)
    const sinceStart = slot - Number(era.start.slot)
    const epoch = Number(era.start.epoch) + Math.floor(sinceStart / epochLength)
    const epochStart = Number(era.start.slot) + (epoch - Number(era.start.epoch)) * epochLength
    return { epoch, epochSlot: slot - epochStart, time: this.slotTime(slot) }
  }

  /** The first slot of an epoch. */
  epochStart(epoch: number): number {
    const era = [...this.eras].reverse().find(candidate => Number(candidate.start.epoch) <= epoch) ?? this.eras[0]
    return Number(era.start.slot) + (epoch - Number(era.start.epoch)) * Number(era.parameters.epochLength)
  }

  slotTime(slot: number): number {
    const era = [...this.eras].reverse().find(candidate => Number(candidate.start.slot) <= slot) ?? this.eras[0]
    const sinceStartMs = (slot - Number(era.start.slot)) * Number(era.parameters.slotLength.milliseconds)
    return Math.floor((this.systemStartMs + Number(era.start.time.seconds) * 1000 + sinceStartMs) / 1000)
  }
}

// ---- identifiers --------------------------------------------------------------------------

/** A block issuer's pool id: bech32 `pool` of the blake2b-224 hash of its cold verification key. */
export function poolIdOfIssuer(verificationKey: string): string {
  return CSL.PublicKey.from_bytes(Buffer.from(verificationKey, 'hex')).hash().to_bech32('pool')
}

export function stakeAddressOfCredential(credential: string, from: 'verificationKey' | 'script' | undefined, networkId: number): string {
  const cred = from === 'script' ? CSL.Credential.from_scripthash(CSL.ScriptHash.from_hex(credential)) : CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_hex(credential))
  return CSL.RewardAddress.new(networkId, cred).to_address().to_bech32()
}

/** The stake address an address delegates to (base addresses only), or null. */
export function stakeAddressOfAddress(address: string): string | null {
  const decoded = decodeAddress(address)
  const base = decoded && CSL.BaseAddress.from_address(decoded)
  return base ? CSL.RewardAddress.new(decoded.network_id(), base.stake_cred()).to_address().to_bech32() : null
}

// ---- outputs ------------------------------------------------------------------------------

const LANGUAGES: Record<string, (() => CSL.Language) | undefined> = {
  'plutus:v1': () => CSL.Language.new_plutus_v1(),
  'plutus:v2': () => CSL.Language.new_plutus_v2(),
  'plutus:v3': () => CSL.Language.new_plutus_v3(),
}

/** The hash of a reference script; null when Ogmios gave no CBOR of it or it does not decode. */
export function scriptHash(script: OgmiosScript): string | null {
  if (!script.cbor) return null
  try {
    if (script.language === 'native') return CSL.NativeScript.from_hex(script.cbor).hash().to_hex()
    const language = LANGUAGES[script.language]
    const bytes = plutusScriptBytes(new Uint8Array(Buffer.from(script.cbor, 'hex')))
    return language && bytes ? CSL.PlutusScript.new_with_version(bytes, language()).hash().to_hex() : null
  } catch {
    return null
  }
}

export function assetsOf(value: OgmiosValue): Port.AssetQuantity[] {
  const assets = new Map<string, bigint>()
  for (const [policy, named] of Object.entries(value)) {
    if (policy === 'ada') continue
    for (const [name, quantity] of Object.entries(named)) assets.set(policy + name, BigInt(quantity))
  }
  return assetList(assets)
}

export function toOutputContent(output: OgmiosOutput): Port.ChainOutputContent {
  return {
    address: output.address,
    lovelace: String(output.value.ada.lovelace),
    assets: assetsOf(output.value),
    dataHash: output.datumHash ?? null,
    inlineDatum: output.datum ?? null,
    referenceScriptHash: output.script ? scriptHash(output.script) : null,
  }
}

/**
 * What an input shows when neither the index nor the resolver knows the output it spends: the
 * reference is certain, the content is not (no address, no lovelace, no assets). The port has no
 * nullable content, and leaving the input out would misstate the transaction's shape.
 */
export const UNKNOWN_OUTPUT: Port.ChainOutputContent = Object.freeze({ address: '', lovelace: '0', assets: [], dataHash: null, inlineDatum: null, referenceScriptHash: null })

export const refOf = (txHash: string, index: number) => `${txHash}#${index}`

// ---- transactions -------------------------------------------------------------------------

export type InputKind = 'spent' | 'collateral' | 'reference'

export interface InputReference {
  txHash: string
  outputIndex: number
  kind: InputKind
}

/** A transaction's inputs in Blockfrost's order: spent inputs, collaterals, reference inputs. */
export function inputReferences(tx: OgmiosTransaction): InputReference[] {
  const listed = (refs: OgmiosOutputReference[] | undefined, kind: InputKind) => (refs ?? []).map(ref => ({ txHash: ref.transaction.id, outputIndex: ref.index, kind }))
  return [...listed(tx.inputs, 'spent'), ...listed(tx.collaterals, 'collateral'), ...listed(tx.references, 'reference')]
}

export const isValidContract = (tx: OgmiosTransaction) => tx.spends !== 'collaterals'

/** The references of the outputs the transaction consumes: its inputs, or only its collaterals when its scripts failed. */
export function spentReferences(tx: OgmiosTransaction): OgmiosOutputReference[] {
  return isValidContract(tx) ? tx.inputs : (tx.collaterals ?? [])
}

/** The outputs a transaction creates, by index: its outputs, or only its collateral return (after them) when its scripts failed. */
export function createdOutputs(tx: OgmiosTransaction): [number, OgmiosOutput][] {
  if (isValidContract(tx)) return tx.outputs.map((output, index) => [index, output])
  return tx.collateralReturn ? [[tx.outputs.length, tx.collateralReturn]] : []
}

export function toTxInput(ref: InputReference, content: Port.ChainOutputContent): Port.ChainTxInput {
  return { ...content, txHash: ref.txHash, outputIndex: ref.outputIndex, collateral: ref.kind === 'collateral', reference: ref.kind === 'reference' }
}

/** JSON text of a metadatum: Ogmios' schema-less JSON, or, when it gave only CBOR, the same text chain indexers show. */
function metadatumText(entry: { json?: unknown; cbor?: string }): string {
  if (entry.cbor !== undefined && entry.json === undefined) return metadatumJson(CSL.TransactionMetadatum.from_hex(entry.cbor))
  return jsonText(entry.json)
}

/** JSON text with bigints written as their digits. */
export function jsonText(value: unknown): string {
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  if (value && typeof value === 'object') return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`).join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

export function toMetadata(tx: OgmiosTransaction): Port.ChainTxMetadata[] {
  return Object.entries(tx.metadata?.labels ?? {})
    .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0))
    .map(([label, entry]) => ({ label, json: metadatumText(entry) }))
}

export const feeOf = (tx: OgmiosTransaction) => lovelaceOf(tx.fee)

/** Lovelace of the outputs a transaction creates (what a block's and an epoch's `output` add up). */
export const createdLovelace = (tx: OgmiosTransaction) => createdOutputs(tx).reduce((sum, [, output]) => sum + BigInt(output.value.ada.lovelace), 0n)

export const sizeOf = (tx: OgmiosTransaction) => (tx.cbor ? tx.cbor.length / 2 : 0)

/**
 * Deposits paid minus refunds. By value conservation when every spent input is known (exact);
 * else from what the certificates and proposals state, which misses the implicit deposits of
 * pre-Conway stake registrations and pool registrations.
 */
export function depositOf(tx: OgmiosTransaction, spent: (Port.ChainOutputContent | null)[]): bigint {
  if (!isValidContract(tx)) return 0n
  if (spent.every(content => content !== null)) {
    const consumed = spent.reduce((sum, content) => sum + BigInt(content!.lovelace), 0n)
    const withdrawn = Object.values(tx.withdrawals ?? {}).reduce((sum, amount) => sum + lovelaceOf(amount), 0n)
    const produced = tx.outputs.reduce((sum, output) => sum + BigInt(output.value.ada.lovelace), 0n)
    return consumed + withdrawn - produced - feeOf(tx) - lovelaceOf(tx.treasury?.donation)
  }
  const refunds = new Set(['stakeCredentialDeregistration', 'delegateRepresentativeRetirement'])
  const certificates = (tx.certificates ?? []).reduce((sum, cert) => sum + (refunds.has(cert.type) ? -1n : 1n) * lovelaceOf(cert.deposit), 0n)
  return certificates + (tx.proposals ?? []).reduce((sum, proposal) => sum + lovelaceOf(proposal.deposit), 0n)
}

/** The figures of a transaction that Blockfrost counts. */
export function transactionCounts(tx: OgmiosTransaction) {
  const certificates = tx.certificates ?? []
  const counted = (test: (cert: OgmiosCertificate) => boolean) => certificates.filter(test).length
  const minted = Object.values(tx.mint ?? {}).reduce((sum, named) => sum + Object.keys(named).length, 0)
  return {
    // A transaction whose scripts failed mints nothing.
    assetMintOrBurnCount: isValidContract(tx) ? minted : 0,
    withdrawalCount: Object.keys(tx.withdrawals ?? {}).length,
    delegationCount: counted(cert => cert.type === 'stakeDelegation' && cert.stakePool !== undefined),
    stakeCertCount: counted(cert => cert.type === 'stakeCredentialRegistration' || cert.type === 'stakeCredentialDeregistration'),
    poolUpdateCount: counted(cert => cert.type === 'stakePoolRegistration'),
    redeemerCount: tx.redeemers?.length ?? 0,
  }
}

/** Mints (positive) and burns (negative) by unit, in the order Ogmios lists them. */
export function mintedUnits(tx: OgmiosTransaction): [string, bigint][] {
  if (!isValidContract(tx)) return []
  return Object.entries(tx.mint ?? {}).flatMap(([policy, named]) => Object.entries(named).map(([name, quantity]): [string, bigint] => [policy + name, BigInt(quantity)]))
}

export function toAssetHistoryEntry(txHash: string, quantity: bigint): Port.ChainAssetHistoryEntry {
  return quantity < 0n ? { txHash, action: 'burned', amount: String(-quantity) } : { txHash, action: 'minted', amount: String(quantity) }
}

export const invalidBefore = (tx: OgmiosTransaction) => text(tx.validityInterval?.invalidBefore)
export const invalidHereafter = (tx: OgmiosTransaction) => text(tx.validityInterval?.invalidAfter)
export const withdrawalsOf = (tx: OgmiosTransaction) => Object.entries(tx.withdrawals ?? {}).map(([stakeAddress, amount]) => ({ stakeAddress, amount: lovelaceOf(amount) }))
export const rewardsOf = (summary: OgmiosRewardAccountSummary) => lovelaceOf(summary.rewards)

// ---- blocks -------------------------------------------------------------------------------

export interface BlockFigures {
  hash: string
  height: number
  slot: number
  size: number
  previousBlock: string | null
  slotLeader: string
}

/** What a block tells of itself (its place in time and its sums come from elsewhere). */
export function blockFigures(block: OgmiosBlock): BlockFigures {
  const key = block.issuer?.verificationKey
  return {
    hash: block.id,
    height: block.height ?? 0,
    slot: block.slot ?? 0,
    size: block.size?.bytes ?? 0,
    previousBlock: block.ancestor && block.ancestor !== 'genesis' ? block.ancestor : null,
    slotLeader: key ? poolIdOfIssuer(key) : '',
  }
}
