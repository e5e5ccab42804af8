import { execFile } from 'node:child_process'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { exUnitsFee } from '../../srv/chains/chain-a/plutus.ts'
import { ChainADevnet, type DevnetOptions } from '../../devnet/chain-a/index.ts'
import { PROTOCOL_PARAMETERS } from '../../devnet/chain-a/params.ts'
import type { Output } from '../../devnet/chain-a/types.ts'
import { toCslValue } from '../../srv/chains/chain-a/csl.ts'
import type { Value } from '../../srv/chains/chain-a/value.ts'
import { signaturePolicy } from '../../devnet/chain-a/wallet.ts'

/** Shared helpers for the devnet tests: a devnet on an ephemeral port and a hand-rolled transaction builder. */

export const ADA = 1_000_000n

export interface Run {
  status: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a command to its end without blocking the event loop (spawnSync would: an idle keep-alive
 * connection the server closes meanwhile would then be reused, and the next fetch fail).
 */
export function runCommand(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise(resolve => {
    execFile(command, args, { ...options, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0
      resolve({ status, stdout, stderr })
    })
  })
}

export function startDevnet(overrides: Partial<DevnetOptions> = {}): Promise<ChainADevnet> {
  return ChainADevnet.start({
    seed: 'devnet-test', blockTimeMs: 0, slotLengthMs: 1000, epochLength: 500, securityParam: 10,
    activity: false, wallets: 3, port: 0, ...overrides,
  })
}

export async function getJson(devnet: ChainADevnet, path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(devnet.url + path)
  return { status: response.status, body: await response.json() }
}

export async function submitHttp(devnet: ChainADevnet, cbor: Uint8Array, contentType = 'application/cbor'): Promise<{ status: number; body: any }> {
  const response = await fetch(devnet.url + '/tx/submit', { method: 'POST', headers: { 'Content-Type': contentType }, body: Buffer.from(cbor) })
  return { status: response.status, body: await response.json() }
}

/** The wallet's unspent output with the most lovelace. */
export function largestUtxo(devnet: ChainADevnet, address: string): Output {
  return devnet.ledger.unspentAt(address).filter(o => !devnet.ledger.pendingView.isSpent(o.ref)).sort((a, b) => Number(b.value.coin - a.value.coin))[0]
}

export interface TxSpec {
  inputs: Output[]
  outputs?: { address: string; coin: bigint; assets?: Map<string, bigint>; datum?: { inline: CSL.PlutusData } | { hash: CSL.PlutusData }; scriptRef?: CSL.PlutusScript }[]
  /** Where the remainder goes (default: the first input's address). */
  change?: string
  /** Added to the change's lovelace after balancing (to break value conservation). */
  changeDelta?: bigint
  /** A fixed fee; by default the minimum fee for the final size. */
  fee?: bigint
  ttl?: number
  validFrom?: number
  /** Minting under a policy: a native script, or a Plutus script (with a mint redeemer). */
  mint?: { policy: CSL.NativeScript | CSL.PlutusScript; name: string; quantity: bigint }[]
  /** Native scripts in the witness set (default: the mint policies). */
  scripts?: CSL.NativeScript[]
  certificates?: CSL.Certificate[]
  /** Lovelace that certificates take (deposits) or give back (negative: refunds). */
  deposits?: bigint
  withdrawals?: { stakeAddress: string; amount: bigint }[]
  metadata?: Record<number, unknown>
  /** Leave the auxiliary data hash out of the body. */
  omitAuxiliaryDataHash?: boolean
  requiredSigners?: string[]
  plutusScripts?: CSL.PlutusScript[]
  redeemers?: { tag: 'spend' | 'mint'; index: number; data: CSL.PlutusData; mem: number; steps: number }[]
  /** Datums in the witness set. */
  datums?: CSL.PlutusData[]
  referenceInputs?: Output[]
  collateral?: Output[]
  collateralReturn?: { address: string; coin: bigint }
  totalCollateral?: bigint
  /** By default computed from the redeemers, datums and the Plutus V3 cost model; null leaves it out. */
  scriptDataHash?: string | null
  isValid?: boolean
  signers: CSL.PrivateKey[]
}

const bigNum = (n: bigint | number) => CSL.BigNum.from_str(String(n))

/** Builds and signs a transaction exactly as specified, balancing lovelace and assets into a change output. */
export function buildTx(spec: TxSpec): Uint8Array {
  let fee = spec.fee ?? 170_000n
  const exUnits = (spec.redeemers ?? []).reduce((sum, r) => ({ mem: sum.mem + r.mem, steps: sum.steps + r.steps }), { mem: 0, steps: 0 })
  for (;;) {
    const bytes = assemble(spec, fee)
    const minimum = 44n * BigInt(bytes.length) + 155_381n + exUnitsFee(exUnits, PROTOCOL_PARAMETERS)
    if (spec.fee !== undefined || fee >= minimum) return bytes
    fee = minimum
  }
}

/** The minimal outputs a test spends: where they are and what they hold. */
type Spendable = Pick<Output, 'txHash' | 'index' | 'address' | 'value'>

const inputOf = (output: Spendable) => CSL.TransactionInput.new(CSL.TransactionHash.from_hex(output.txHash), output.index)

function inputList(outputs: Spendable[]): CSL.TransactionInputs {
  const list = CSL.TransactionInputs.new()
  outputs.forEach(output => list.add(inputOf(output)))
  return list
}

export function plutusData(json: unknown): CSL.PlutusData {
  return CSL.PlutusData.from_json(JSON.stringify(json), CSL.PlutusDatumSchema.DetailedSchema)
}

export function v3CostModels(): CSL.Costmdls {
  const model = CSL.CostModel.new()
  PROTOCOL_PARAMETERS.costModels.PlutusV3.forEach((cost, i) => model.set(i, CSL.Int.from_str(String(cost))))
  const models = CSL.Costmdls.new()
  models.insert(CSL.Language.new_plutus_v3(), model)
  return models
}

function assemble(spec: TxSpec, fee: bigint): Uint8Array {
  const inputs = CSL.TransactionInputs.new()
  const remainder: Value = { coin: 0n, assets: new Map() }
  const add = (coin: bigint, assets: Map<string, bigint>, sign: bigint) => {
    remainder.coin += sign * coin
    for (const [unit, q] of assets) remainder.assets.set(unit, (remainder.assets.get(unit) ?? 0n) + sign * q)
  }
  for (const input of spec.inputs) {
    inputs.add(CSL.TransactionInput.new(CSL.TransactionHash.from_hex(input.txHash), input.index))
    add(input.value.coin, input.value.assets, 1n)
  }
  const outputs = CSL.TransactionOutputs.new()
  for (const output of spec.outputs ?? []) {
    const cslOutput = CSL.TransactionOutput.new(CSL.Address.from_bech32(output.address), toCslValue({ coin: output.coin, assets: output.assets ?? new Map() }))
    if (output.datum && 'inline' in output.datum) cslOutput.set_plutus_data(output.datum.inline)
    if (output.datum && 'hash' in output.datum) cslOutput.set_data_hash(CSL.hash_plutus_data(output.datum.hash))
    if (output.scriptRef) cslOutput.set_script_ref(CSL.ScriptRef.new_plutus_script(output.scriptRef))
    outputs.add(cslOutput)
    add(output.coin, output.assets ?? new Map(), -1n)
  }
  const mintUnits = new Map<string, bigint>()
  for (const m of spec.mint ?? []) mintUnits.set(m.policy.hash().to_hex() + Buffer.from(m.name).toString('hex'), m.quantity)
  add(0n, mintUnits, 1n)
  for (const w of spec.withdrawals ?? []) remainder.coin += w.amount
  remainder.coin -= fee + (spec.deposits ?? 0n) - (spec.changeDelta ?? 0n)
  // A change output cannot hold a negative quantity; leaving it out lets the ledger judge the imbalance.
  for (const [unit, q] of remainder.assets) if (q <= 0n) remainder.assets.delete(unit)
  outputs.add(CSL.TransactionOutput.new(CSL.Address.from_bech32(spec.change ?? spec.inputs[0].address), toCslValue(remainder)))

  const body = CSL.TransactionBody.new_tx_body(inputs, outputs, bigNum(fee))
  if (spec.ttl !== undefined) body.set_ttl(bigNum(spec.ttl))
  if (spec.validFrom !== undefined) body.set_validity_start_interval_bignum(bigNum(spec.validFrom))
  if (spec.mint?.length) {
    const mint = CSL.Mint.new()
    for (const m of spec.mint) {
      const assets = mint.get(m.policy.hash())?.get(0) ?? CSL.MintAssets.new()
      assets.insert(CSL.AssetName.new(Buffer.from(m.name)), m.quantity < 0n ? CSL.Int.new_negative(bigNum(-m.quantity)) : CSL.Int.new(bigNum(m.quantity)))
      mint.insert(m.policy.hash(), assets)
    }
    body.set_mint(mint)
  }
  if (spec.certificates?.length) {
    const certs = CSL.Certificates.new()
    spec.certificates.forEach(cert => certs.add(cert))
    body.set_certs(certs)
  }
  if (spec.withdrawals?.length) {
    const withdrawals = CSL.Withdrawals.new()
    for (const w of spec.withdrawals) withdrawals.insert(CSL.RewardAddress.from_address(CSL.Address.from_bech32(w.stakeAddress))!, bigNum(w.amount))
    body.set_withdrawals(withdrawals)
  }
  if (spec.referenceInputs?.length) body.set_reference_inputs(inputList(spec.referenceInputs))
  if (spec.collateral?.length) body.set_collateral(inputList(spec.collateral))
  if (spec.collateralReturn) body.set_collateral_return(CSL.TransactionOutput.new(CSL.Address.from_bech32(spec.collateralReturn.address), CSL.Value.new(bigNum(spec.collateralReturn.coin))))
  if (spec.totalCollateral !== undefined) body.set_total_collateral(bigNum(spec.totalCollateral))
  if (spec.requiredSigners?.length) {
    const signers = CSL.Ed25519KeyHashes.new()
    spec.requiredSigners.forEach(hash => signers.add(CSL.Ed25519KeyHash.from_hex(hash)))
    body.set_required_signers(signers)
  }
  let auxiliary: CSL.AuxiliaryData | undefined
  if (spec.metadata) {
    auxiliary = CSL.AuxiliaryData.new()
    const metadata = CSL.GeneralTransactionMetadata.new()
    for (const [label, json] of Object.entries(spec.metadata)) metadata.insert(bigNum(Number(label)), CSL.encode_json_str_to_metadatum(JSON.stringify(json), CSL.MetadataJsonSchema.NoConversions))
    auxiliary.set_metadata(metadata)
    if (!spec.omitAuxiliaryDataHash) body.set_auxiliary_data_hash(CSL.hash_auxiliary_data(auxiliary))
  }

  const witnesses = CSL.TransactionWitnessSet.new()
  const scripts = spec.scripts ?? (spec.mint ?? []).map(m => m.policy).filter(policy => policy instanceof CSL.NativeScript)
  if (scripts.length) {
    const list = CSL.NativeScripts.new()
    const seen = new Set<string>()
    for (const script of scripts) if (!seen.has(script.hash().to_hex())) { seen.add(script.hash().to_hex()); list.add(script) }
    witnesses.set_native_scripts(list)
  }
  if (spec.plutusScripts?.length) {
    const list = CSL.PlutusScripts.new()
    spec.plutusScripts.forEach(s => list.add(s))
    witnesses.set_plutus_scripts(list)
  }
  const redeemers = CSL.Redeemers.new()
  for (const r of spec.redeemers ?? []) {
    const tag = r.tag === 'spend' ? CSL.RedeemerTag.new_spend() : CSL.RedeemerTag.new_mint()
    redeemers.add(CSL.Redeemer.new(tag, bigNum(r.index), r.data, CSL.ExUnits.new(bigNum(r.mem), bigNum(r.steps))))
  }
  if (redeemers.len()) witnesses.set_redeemers(redeemers)
  const datums = CSL.PlutusList.new()
  spec.datums?.forEach(d => datums.add(d))
  if (datums.len()) witnesses.set_plutus_data(datums)
  const dataHash = spec.scriptDataHash !== undefined ? spec.scriptDataHash
    : redeemers.len() || datums.len() ? CSL.hash_script_data(redeemers, v3CostModels(), datums.len() ? datums : undefined).to_hex() : null
  if (dataHash) body.set_script_data_hash(CSL.ScriptDataHash.from_hex(dataHash))
  const fixed = CSL.FixedTransaction.from_bytes(CSL.Transaction.new(body, witnesses, auxiliary).to_bytes())
  if (spec.isValid === false) fixed.set_is_valid(false)
  for (const key of spec.signers) fixed.sign_and_add_vkey_signature(key)
  return fixed.to_bytes()
}

export { signaturePolicy }

export const unitOf = (policy: CSL.NativeScript, name: string) => policy.hash().to_hex() + Buffer.from(name).toString('hex')
