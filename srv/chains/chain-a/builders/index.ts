import { badInput } from '../../../lib/errors.ts'
import type { RedeemerBudget, SlotConfig } from '../plutus.ts'
import type { AssetQuantity, ChainProtocolParameters, ChainTxMetadata, ChainUtxo } from '../port.ts'
import { buildooorAssembler } from './buildooor.ts'
import { buildTransaction } from './build.ts'
import { cslAssembler } from './csl.ts'

/**
 * Transaction builders for chain A: from what a service knows (the sender's UTxOs, the protocol
 * parameters, the current slot) and what the caller asks for (payments, mints and burns, metadata,
 * spends of script-locked outputs), an unsigned Conway-era transaction and everything a build record
 * needs. Two backends assemble the transaction, one with CSL and one with buildooor; selection,
 * balancing, fees, collateral and script evaluation are shared (`build.ts`), so both answer the same
 * request with the same inputs and outputs.
 *
 * Errors are ApiErrors with stable codes: INSUFFICIENT_FUNDS, OUTPUT_BELOW_MIN_ADA, INVALID_METADATA,
 * INVALID_NATIVE_SCRIPT, INVALID_PLUTUS_DATA, INVALID_SCRIPT, SCRIPT_FAILED, NO_COLLATERAL,
 * UNKNOWN_BUILDER, and for malformed parameters INVALID_ADDRESS, WRONG_NETWORK, INVALID_VALUE,
 * INVALID_ASSET_UNIT, INVALID_VALIDITY_INTERVAL (all 400).
 */

export type BuilderName = 'csl' | 'buildooor'

export const BUILDER_NAMES: readonly BuilderName[] = ['csl', 'buildooor']

export interface OutputRef {
  txHash: string
  outputIndex: number
}

/** A payment to an address. */
export interface PaymentRequest {
  address: string
  /** Lovelace as an integer string; by default the minimum the output needs. */
  lovelace?: string
  assets?: AssetQuantity[]
  /** A datum for the output, PlutusData JSON in cardano-cli's detailed schema (`{"int":42}`, …). */
  datumJson?: string
  /** Inline datum (default) or only its hash in the output. */
  datumInline?: boolean
}

/** Minting (positive quantities) and burning (negative) under one native-script policy. */
export interface MintRequest {
  /** The policy: native-script JSON in cardano-cli's format (`{"type":"all","scripts":[…]}`), or its CBOR hex. */
  policy: string
  /** Asset names in hex (at most 32 bytes) with integer-string quantities. */
  assets: { assetName: string; quantity: string }[]
}

/** Spending an output locked by a Plutus V3 validator. */
export interface ScriptSpendRequest {
  utxo: ChainUtxo
  /** The validator's CBOR hex, wrapped once or twice (cardano-cli's `cborHex`). */
  validator: string
  /** The redeemer, PlutusData JSON in cardano-cli's detailed schema. */
  redeemerJson: string
  /** The datum, required when the output carries only its hash. */
  datumJson?: string
}

export interface BuildRequest {
  /** The sender's unspent outputs: inputs, collateral and fees come from these. */
  utxos: ChainUtxo[]
  /** Where the change goes (usually the sender's address). */
  changeAddress: string
  protocolParameters: ChainProtocolParameters
  currentSlot: number
  /** 0 for test networks, 1 for mainnet. */
  networkId: number
  /** Slot-to-time conversion for script contexts and the default validity (`slotConfigFor` in plutus.ts). */
  slotConfig: SlotConfig
  /** Slots; by default from the current slot to two hours later, narrowed to the mint policies' time locks. */
  validity?: { invalidBefore?: number | null; invalidHereafter?: number | null }
  /** Outputs another pending build has already spent: never selected. */
  excludedUtxos?: OutputRef[]
  /** Payment key hashes (hex) that must sign. */
  requiredSigners?: string[]
  outputs?: PaymentRequest[]
  mint?: MintRequest[]
  /** Transaction metadata: a JSON object keyed by numeric label strings (674 = CIP-20 message, 721 = CIP-25). */
  metadataJson?: string
  scriptInputs?: ScriptSpendRequest[]
}

export interface BuiltInput extends OutputRef {
  address: string
  lovelace: string
  assets: AssetQuantity[]
  /** Locked by a script (a Plutus spend). */
  isScript: boolean
}

export interface BuiltOutput {
  outputIndex: number
  address: string
  lovelace: string
  assets: AssetQuantity[]
  isChange: boolean
  datumHash: string | null
  inlineDatum: string | null
}

export interface BuildResult {
  builder: BuilderName
  unsignedTxCbor: string
  /** The transaction id: the hash of the body, which signing does not change. */
  txBodyHash: string
  fee: string
  /** Bytes of the unsigned transaction (the fee already pays for the signatures to come). */
  size: number
  inputs: BuiltInput[]
  referenceInputs: OutputRef[]
  outputs: BuiltOutput[]
  /** Minted (positive) and burned (negative) quantities. */
  mint: AssetQuantity[]
  metadata: ChainTxMetadata[]
  collateral: BuiltInput[]
  collateralReturn: BuiltOutput | null
  totalCollateral: string | null
  redeemers: RedeemerBudget[]
  validity: { invalidBefore: number | null; invalidHereafter: number | null }
  requiredSigners: string[]
  /** Hashes of the validators the transaction runs and the policies it mints under. */
  scriptHashes: string[]
  mintPolicyIds: string[]
}

export interface TransactionBuilder {
  readonly name: BuilderName
  build(request: BuildRequest): Promise<BuildResult>
}

const ASSEMBLERS = { csl: cslAssembler, buildooor: buildooorAssembler }

export function builderFor(name: string): TransactionBuilder {
  if (!BUILDER_NAMES.includes(name as BuilderName)) {
    throw badInput('UNKNOWN_BUILDER', `Unknown transaction builder '${name}'; available: ${BUILDER_NAMES.join(', ')}`, 'builder')
  }
  const assembler = ASSEMBLERS[name as BuilderName]
  return { name: name as BuilderName, build: async request => buildTransaction(assembler, request) }
}
