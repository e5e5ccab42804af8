import type { OutputRef } from '../csl.ts'
import type { CostModels, ExUnits, RedeemerBudget, SlotConfig } from '../plutus.ts'
import type { AssetQuantity, ChainProtocolParameters, ChainTxMetadata, ChainUtxo } from '../port.ts'
import type { Value } from '../value.ts'

/**
 * The builders' shapes: what a service asks for (BuildRequest) and gets (BuildResult), the request
 * as settled (Plan), and the fully decided transaction a backend assembles (Draft).
 */

export type { OutputRef }

export type BuilderName = 'csl' | 'buildooor'

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

// ---- the settled request ----------------------------------------------------------------

export interface PlanParameters {
  minFeeA: bigint
  minFeeB: bigint
  coinsPerUtxoByte: bigint
  maxTxSize: number
  maxValSize: number
  keyDeposit: bigint
  poolDeposit: bigint
  priceMem: number
  priceStep: number
  minFeeRefScriptCostPerByte: number
  maxTxExUnits: ExUnits
  collateralPercent: number
  maxCollateralInputs: number
  costModels: CostModels
}

/** A datum as CBOR hex, for an output inline or by hash. */
export interface PlannedDatum {
  cbor: string
  inline: boolean
}

export interface PlannedOutput {
  address: string
  /** null: the minimum the output needs. */
  lovelace: bigint | null
  assets: Map<string, bigint>
  datum: PlannedDatum | null
}

export interface PlannedMint {
  policyId: string
  /** The native script's CBOR hex. */
  script: string
  /** Quantity by asset name hex; negative burns. */
  assets: Map<string, bigint>
}

export interface PlannedScriptInput {
  utxo: ChainUtxo
  value: Value
  /** The validator as the witness set carries it (flat program in one CBOR byte string). */
  script: Uint8Array
  scriptHash: string
  redeemer: string
  /** The datum for the witness set, when the output carries only its hash. */
  witnessDatum: string | null
}

export interface Plan {
  params: PlanParameters
  networkId: number
  slotConfig: SlotConfig
  changeAddress: string
  outputs: PlannedOutput[]
  mints: PlannedMint[]
  /** General transaction metadata, CBOR hex. */
  metadata: string | null
  scriptInputs: PlannedScriptInput[]
  validity: { invalidBefore: number | null; invalidHereafter: number | null }
  requiredSigners: string[]
  /** The sender's key-locked UTxOs that may be selected (excluded ones removed). */
  candidates: ChainUtxo[]
  excludedCount: number
}

// ---- the draft a backend assembles ---------------------------------------------------------

export interface TxOutputSpec {
  address: string
  value: Value
  datum: PlannedDatum | null
}

export interface Collateral {
  inputs: ChainUtxo[]
  total: bigint
  /** What is left of the collateral inputs above `total`, back to the sender. */
  returnOutput: TxOutputSpec | null
}

/** Everything the transaction holds, decided; the assembler adds nothing and leaves nothing out. */
export interface Draft {
  plan: Plan
  /** Key-locked inputs from coin selection (script inputs are in `plan.scriptInputs`). */
  inputs: ChainUtxo[]
  /** The requested outputs in order, then the change output. */
  outputs: TxOutputSpec[]
  fee: bigint
  collateral: Collateral | null
  /** Declared execution units per script input, in `plan.scriptInputs` order. */
  exUnits: ExUnits[]
}

export interface Assembler {
  readonly name: BuilderName
  /** An output's CBOR as this library writes it: its size sets the output's minimum ADA. */
  encodeOutput(output: TxOutputSpec): Uint8Array
  /** The unsigned transaction (CBOR) holding exactly what the draft says. */
  assemble(draft: Draft): Uint8Array
}
