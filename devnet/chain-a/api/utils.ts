import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import express, { type Request, type Router } from 'express'
import { plutusScriptBytes, ScriptFailure, type RedeemerBudget, type RedeemerTag } from '../../../srv/chains/chain-a/plutus.ts'
import { parseAddress, paymentCredentialOf } from '../addresses.ts'
import type { Ledger } from '../ledger.ts'
import { evaluateClientTransaction } from '../scripts.ts'
import type { OutputData } from '../types.ts'
import type { Value } from '../values.ts'
import { badRequest } from './http.ts'

/**
 * Blockfrost's script evaluation: `POST /utils/txs/evaluate` (the transaction as CBOR, hex or raw
 * bytes) and `POST /utils/txs/evaluate/utxos` (JSON with extra outputs to resolve inputs from).
 * Answers Ogmios' EvaluateTx result like Blockfrost: version 5 by default, version 6 with `?version=6`.
 * Evaluation failures are answered with 200 and the failure in the body, as Ogmios does.
 */

const BODY_LIMIT = 65536

export function utilityRoutes(router: Router, ledger: Ledger) {
  router.post('/utils/txs/evaluate', express.raw({ type: () => true, limit: BODY_LIMIT }), (req, res) => {
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    res.json(evaluation(ledger, transactionBytes(body), new Map(), ogmiosVersion(req)))
  })
  router.post('/utils/txs/evaluate/utxos', express.json({ limit: BODY_LIMIT }), (req, res) => {
    const { cbor, additionalUtxoSet } = req.body ?? {}
    if (typeof cbor !== 'string') throw badRequest('body/cbor must be a string (the transaction as base16 or base64 CBOR).')
    if (additionalUtxoSet !== undefined && !Array.isArray(additionalUtxoSet)) throw badRequest('body/additionalUtxoSet must be an array of [TxIn, TxOut] pairs.')
    res.json(evaluation(ledger, transactionBytes(Buffer.from(cbor)), additionalOutputs(additionalUtxoSet ?? []), ogmiosVersion(req)))
  })
}

function ogmiosVersion(req: Request): 5 | 6 {
  const version = req.query.version ?? '5'
  if (version !== '5' && version !== '6') throw badRequest('querystring/version must be 5 or 6.')
  return Number(version) as 5 | 6
}

/** The transaction's bytes from a body that holds them as hex text, base64 text or raw CBOR. */
function transactionBytes(body: Buffer): Uint8Array {
  const text = body.toString('latin1').trim()
  if (/^([0-9a-f]{2})+$/i.test(text)) return new Uint8Array(Buffer.from(text, 'hex'))
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.length % 4 === 0) return new Uint8Array(Buffer.from(text, 'base64'))
  return new Uint8Array(body)
}

function evaluation(ledger: Ledger, bytes: Uint8Array, additional: Map<string, OutputData>, version: 5 | 6) {
  try {
    CSL.FixedTransaction.from_bytes(bytes)
  } catch (error) {
    throw badRequest(`DeserialiseFailure: the transaction is not valid Conway-era CBOR (${(error as Error)?.message ?? error})`)
  }
  for (const ref of additional.keys()) {
    if (ledger.pendingView.output(ref)) return failure(version, { OverlappingAdditionalUtxo: { overlap: [ref] } }, 3002, `The additional UTxO set overlaps with the ledger's: ${ref}`)
  }
  try {
    const budgets = evaluateClientTransaction(bytes, ref => additional.get(ref) ?? ledger.pendingView.output(ref), ledger.params, ledger.slotConfig)
    return version === 5 ? ogmios5({ EvaluationResult: Object.fromEntries(budgets.map(b => [`${V5_PURPOSES[b.tag]}:${b.index}`, { memory: b.mem, steps: b.steps }])) }) : ogmios6Result(budgets)
  } catch (error) {
    if (!(error instanceof ScriptFailure)) throw error
    if (!error.redeemer) return failure(version, { CannotCreateEvaluationContext: { reason: error.reason } }, 3004, error.reason)
    const { tag, index } = error.redeemer
    if (version === 5) return ogmios5({ EvaluationFailure: { ScriptFailures: { [`${V5_PURPOSES[tag]}:${index}`]: [{ validatorFailed: { error: error.reason, traces: error.logs } }] } } })
    return ogmios6Error(3010, 'Some scripts of the transactions terminated with error(s).', [{
      validator: { purpose: V6_PURPOSES[tag], index },
      error: { code: 3012, message: 'Some of the scripts failed to evaluate to a positive outcome.', data: { validationError: error.reason, traces: error.logs } },
    }])
  }
}

const V5_PURPOSES: Record<RedeemerTag, string> = { spend: 'spend', mint: 'mint', cert: 'certificate', reward: 'withdrawal', vote: 'vote', propose: 'propose' }
const V6_PURPOSES: Record<RedeemerTag, string> = { spend: 'spend', mint: 'mint', cert: 'publish', reward: 'withdraw', vote: 'vote', propose: 'propose' }

const ogmios5 = (result: unknown) => ({ type: 'jsonwsp/response', version: '1.0', servicename: 'ogmios', methodname: 'EvaluateTx', result, reflection: null })

const ogmios6Result = (budgets: RedeemerBudget[]) => ({
  jsonrpc: '2.0', method: 'evaluateTransaction', id: null,
  result: budgets.map(b => ({ validator: { purpose: V6_PURPOSES[b.tag], index: b.index }, budget: { memory: b.mem, cpu: b.steps } })),
})

const ogmios6Error = (code: number, message: string, data: unknown) => ({ jsonrpc: '2.0', method: 'evaluateTransaction', id: null, error: { code, message, data } })

const failure = (version: 5 | 6, v5: unknown, code: number, message: string) =>
  (version === 5 ? ogmios5({ EvaluationFailure: v5 }) : ogmios6Error(code, message, v5))

/**
 * Ogmios' additional UTxO entries: `[TxIn, TxOut]` in version 5 form (`{txId, index}`, value
 * `{coins, assets: {"policy.name": n}}`, `datumHash`, `datum`, `script: {"plutus:v3": hex}`) or
 * version 6 form (`{transaction: {id}, index}`, value `{ada: {lovelace}, <policy>: {<name>: n}}`,
 * `script: {language, cbor}`).
 */
function additionalOutputs(entries: unknown[]): Map<string, OutputData> {
  const outputs = new Map<string, OutputData>()
  entries.forEach((entry, i) => {
    try {
      const [txIn, txOut] = entry as [any, any]
      const txHash = String(txIn.txId ?? txIn.transaction?.id)
      if (!/^[0-9a-f]{64}$/i.test(txHash) || !Number.isInteger(txIn.index)) throw new Error('TxIn needs txId and index')
      outputs.set(`${txHash.toLowerCase()}#${txIn.index}`, outputData(txOut))
    } catch (error) {
      throw badRequest(`body/additionalUtxoSet/${i} is not a [TxIn, TxOut] pair: ${(error as Error).message}`)
    }
  })
  return outputs
}

function outputData(txOut: any): OutputData {
  const address = parseAddress(String(txOut.address))
  if (!address) throw new Error(`'${txOut.address}' is not an address`)
  const script = referenceScriptOf(txOut.script)
  return {
    address: String(txOut.address),
    payment: paymentCredentialOf(address),
    stakeAddress: null,
    value: valueOf(txOut.value),
    dataHash: txOut.datumHash ?? txOut.datum_hash ?? null,
    inlineDatum: typeof txOut.datum === 'string' ? txOut.datum : null,
    referenceScriptHash: script ? (script.plutus_script()?.hash() ?? script.native_script()!.hash()).to_hex() : null,
    referenceScript: script?.to_hex() ?? null,
  }
}

function valueOf(value: any): Value {
  const coin = BigInt(value?.coins ?? value?.ada?.lovelace ?? NaN)
  const assets = new Map<string, bigint>()
  for (const [key, quantity] of Object.entries(value?.assets ?? {})) assets.set(key.replace('.', ''), BigInt(quantity as number))
  for (const [policy, named] of Object.entries(value ?? {})) {
    if (/^[0-9a-f]{56}$/i.test(policy)) for (const [name, quantity] of Object.entries(named as object)) assets.set(policy + name, BigInt(quantity as number))
  }
  return { coin, assets }
}

function referenceScriptOf(script: any): CSL.ScriptRef | null {
  if (!script) return null
  const [language, hex] = typeof script.language === 'string' ? [script.language, script.cbor] : Object.entries(script)[0] as [string, any]
  if (language === 'native') return CSL.ScriptRef.new_native_script(CSL.NativeScript.from_hex(String(hex)))
  const version = /^plutus:v([123])$/.exec(language)?.[1]
  const bytes = version && plutusScriptBytes(new Uint8Array(Buffer.from(String(hex), 'hex')))
  if (!bytes) throw new Error(`unsupported script ${language}`)
  const languages = [CSL.Language.new_plutus_v1(), CSL.Language.new_plutus_v2(), CSL.Language.new_plutus_v3()]
  return CSL.ScriptRef.new_plutus_script(CSL.PlutusScript.new_with_version(bytes, languages[Number(version) - 1]))
}
