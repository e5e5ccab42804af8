import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { Cbor, CborArray, CborBytes, CborMap, CborNegInt, CborUInt, type CborMapEntry } from '@harmoniclabs/cbor'
import * as UPLC from '@lucid-evolution/uplc'
import { byteStringContent } from './cbor.ts'
import { cslCostModels, rationalOf, transactionInput, type CostModels, type PlutusLanguage } from './csl.ts'

/**
 * Plutus script evaluation for chain A, shared by the devnet (phase-two validation) and the
 * transaction builders (execution units). Scripts run in the UPLC machine of `@lucid-evolution/uplc`
 * (Aiken's evaluator) with the cost models of the protocol parameters; the script context is built
 * from the transaction and its resolved inputs, with times converted by the network's slot config.
 */

export type { CostModels, PlutusLanguage }

/** Redeemer purposes, named as in the CDDL (`reward` is a withdrawal, `cert` a certificate). */
export type RedeemerTag = 'spend' | 'mint' | 'cert' | 'reward' | 'vote' | 'propose'

interface RedeemerPointer {
  tag: RedeemerTag
  index: number
}

export interface ExUnits {
  mem: number
  steps: number
}

export interface RedeemerBudget extends RedeemerPointer, ExUnits {}

/** Slot-to-time conversion: time(slot) = zeroTimeMs + (slot − zeroSlot) × slotLengthMs. */
export interface SlotConfig {
  zeroTimeMs: number
  zeroSlot: number
  slotLengthMs: number
}

/** An output the transaction spends or references: its reference and its CBOR (a TransactionOutput). */
export interface ResolvedOutput {
  txHash: string
  outputIndex: number
  output: Uint8Array
}

export interface EvaluationOptions {
  costModels: CostModels
  slotConfig: SlotConfig
  /** The budget all scripts of the transaction share: the protocol's max_tx_ex_units. */
  maxTxExUnits: ExUnits
}

/** A script that failed (or could not be run); `redeemer` names it when the evaluator does. */
export class ScriptFailure extends Error {
  readonly redeemer: RedeemerPointer | null
  readonly reason: string
  /** The script's trace messages, in order. */
  readonly logs: string[]

  constructor(redeemer: RedeemerPointer | null, reason: string, logs: string[] = []) {
    const where = redeemer ? `the ${redeemer.tag} script of redeemer ${redeemer.index} failed: ` : ''
    super(`${where}${reason}${logs.length ? ` (trace: ${logs.join(' | ')})` : ''}`)
    this.name = 'ScriptFailure'
    this.redeemer = redeemer
    this.reason = reason
    this.logs = logs
  }
}

/** Slot configs of the public networks (their Shelley-era origin); the devnet derives its own from its genesis. */
export const PUBLIC_SLOT_CONFIGS: Record<'mainnet' | 'preprod' | 'preview', SlotConfig> = {
  mainnet: { zeroTimeMs: 1_596_059_091_000, zeroSlot: 4_492_800, slotLengthMs: 1000 },
  preprod: { zeroTimeMs: 1_655_769_600_000, zeroSlot: 86_400, slotLengthMs: 1000 },
  preview: { zeroTimeMs: 1_666_656_000_000, zeroSlot: 0, slotLengthMs: 1000 },
}

/** The slot config of a network by name; other networks (the devnet) start at slot 0 of their genesis. */
export function slotConfigFor(network: string, genesis: { systemStart: number; slotLength: number }): SlotConfig {
  return PUBLIC_SLOT_CONFIGS[network as keyof typeof PUBLIC_SLOT_CONFIGS]
    ?? { zeroTimeMs: genesis.systemStart * 1000, zeroSlot: 0, slotLengthMs: genesis.slotLength * 1000 }
}

/**
 * Runs every script of the transaction and answers what each redeemer needs. The declared ex units
 * of the redeemers are ignored: each script may use what the earlier ones left of the budget.
 * Throws ScriptFailure when a script fails or the transaction cannot be evaluated.
 */
export function evaluateTransaction(tx: Uint8Array, resolved: ResolvedOutput[], options: EvaluationOptions): RedeemerBudget[] {
  const inputs = resolved.map(r => transactionInput(r).to_bytes())
  let results: Uint8Array[]
  try {
    results = UPLC.eval_phase_two_raw(
      tx, inputs, resolved.map(r => r.output), cslCostModels(options.costModels).to_bytes(),
      BigInt(options.maxTxExUnits.steps), BigInt(options.maxTxExUnits.mem),
      BigInt(options.slotConfig.zeroTimeMs), BigInt(options.slotConfig.zeroSlot), options.slotConfig.slotLengthMs,
    )
  } catch (error) {
    throw scriptFailureOf(error)
  }
  return results.map(bytes => redeemerBudgetOf(CSL.Redeemer.from_bytes(bytes)))
}

const TAGS: Record<CSL.RedeemerTagKind, RedeemerTag> = {
  [CSL.RedeemerTagKind.Spend]: 'spend',
  [CSL.RedeemerTagKind.Mint]: 'mint',
  [CSL.RedeemerTagKind.Cert]: 'cert',
  [CSL.RedeemerTagKind.Reward]: 'reward',
  [CSL.RedeemerTagKind.Vote]: 'vote',
  [CSL.RedeemerTagKind.VotingProposal]: 'propose',
}

const redeemerTagOf = (kind: CSL.RedeemerTagKind): RedeemerTag => TAGS[kind]

/** What a redeemer points at and the execution units it declares. */
export const redeemerBudgetOf = (redeemer: CSL.Redeemer): RedeemerBudget => ({
  tag: redeemerTagOf(redeemer.tag().kind()),
  index: Number(redeemer.index().to_str()),
  mem: Number(redeemer.ex_units().mem().to_str()),
  steps: Number(redeemer.ex_units().steps().to_str()),
})

/** The evaluator's names for purposes, as it prints them in failures (`Spend[0] …`). */
const EVALUATOR_TAGS: Record<string, RedeemerTag> = {
  spend: 'spend', mint: 'mint', cert: 'cert', publish: 'cert', reward: 'reward', withdraw: 'reward', vote: 'vote', propose: 'propose',
}

/**
 * The evaluator reports failures as text: a headline, then per failed redeemer `Spend[0] <reason>`
 * and the script's trace lines as `Trace <message>`.
 */
function scriptFailureOf(error: unknown): ScriptFailure {
  const text = typeof error === 'string' ? error : error instanceof Error ? error.message : JSON.stringify(error)
  const lines = text.split('\n').map(line => line.trim()).filter(Boolean)
  const logs = lines.filter(line => line.startsWith('Trace ')).map(line => line.slice('Trace '.length))
  for (const line of lines) {
    const match = /^([A-Za-z]+)\[(\d+)\]\s*(.*)$/.exec(line)
    const tag = match && EVALUATOR_TAGS[match[1].toLowerCase()]
    if (tag) return new ScriptFailure({ tag, index: Number(match[2]) }, match[3] || lines[0], logs)
  }
  return new ScriptFailure(null, lines.filter(line => !line.startsWith('Trace ')).join('; ') || 'the transaction could not be evaluated', logs)
}

/**
 * Cost models as the chain port carries them (JSON text): language name → array of costs, or →
 * object of named costs (taken in the order given). Names may be `PlutusV3` or `PlutusScriptV3`.
 */
export function parseCostModels(json: string | Record<string, unknown> | null | undefined): CostModels {
  const raw = typeof json === 'string' ? JSON.parse(json) : json ?? {}
  const models: CostModels = {}
  for (const [name, costs] of Object.entries(raw as Record<string, unknown>)) {
    const language = /^Plutus(?:Script)?V([123])$/.exec(name)
    if (!language || costs === null || typeof costs !== 'object') continue
    models[`PlutusV${language[1]}` as PlutusLanguage] = (Array.isArray(costs) ? costs : Object.values(costs)).map(Number)
  }
  return models
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/** The fee part for execution units: ⌈mem × price_mem + steps × price_step⌉. */
export function exUnitsFee(units: ExUnits, prices: { priceMem: number; priceStep: number }): bigint {
  const mem = rationalOf(prices.priceMem)
  const step = rationalOf(prices.priceStep)
  const numerator = BigInt(units.mem) * mem.numerator * step.denominator + BigInt(units.steps) * step.numerator * mem.denominator
  return ceilDiv(numerator, mem.denominator * step.denominator)
}

/**
 * The Conway fee for reference scripts: the price per byte grows by a factor 1.2 for every
 * further 25 KiB of script bytes; the total is rounded down.
 */
export function referenceScriptsFee(bytes: number, costPerByte: number): bigint {
  const base = rationalOf(costPerByte)
  let numerator = 0n
  let denominator = 1n
  let price = { numerator: base.numerator, denominator: base.denominator }
  let remaining = BigInt(bytes)
  while (remaining > 0n) {
    const chunk = remaining < 25_600n ? remaining : 25_600n
    numerator = numerator * price.denominator + chunk * price.numerator * denominator
    denominator *= price.denominator
    price = { numerator: price.numerator * 6n, denominator: price.denominator * 5n }
    remaining -= chunk
  }
  return numerator / denominator
}

/**
 * The cost models of the languages a transaction runs as its script data hash commits to them (the
 * "language views"), in canonical order (shorter keys first): V2 and V3 keyed by their language
 * number with a plain array of costs; V1 keeps its historical quirk of a bytes-wrapped key and an
 * indefinite-length array in a byte string.
 */
export function languageViews(costModels: CostModels, languages: Set<PlutusLanguage>): Uint8Array {
  const costArray = (costs: number[] = [], indefinite = false) =>
    new CborArray(costs.map(cost => (cost < 0 ? new CborNegInt(cost) : new CborUInt(cost))), { indefinite })
  const entries: CborMapEntry[] = []
  for (const [language, key] of [['PlutusV2', 1], ['PlutusV3', 2]] as const) {
    if (languages.has(language)) entries.push({ k: new CborUInt(key), v: costArray(costModels[language]) })
  }
  if (languages.has('PlutusV1')) {
    entries.push({ k: new CborBytes(Uint8Array.of(0)), v: new CborBytes(Cbor.encode(costArray(costModels.PlutusV1, true)).toBuffer()) })
  }
  return Cbor.encode(new CborMap(entries)).toBuffer()
}

/**
 * A Plutus script's bytes as the witness set carries them: the flat-encoded program inside one CBOR
 * byte string. Accepts the script with that one wrapper or with two (cardano-cli's `cborHex`);
 * answers null for anything else.
 */
export function plutusScriptBytes(bytes: Uint8Array): Uint8Array | null {
  const inner = byteStringContent(bytes)
  if (inner === null || inner.length === 0) return null
  const innermost = byteStringContent(inner)
  if (innermost === null) return inner[0] >> 5 !== 2 ? bytes : null
  return innermost.length > 0 ? inner : null
}
