import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { readCbor } from '../../../srv/chains/chain-a/cbor.ts'
import { plutusScriptBytes, ScriptFailure, type RedeemerTag } from '../../../srv/chains/chain-a/plutus.ts'
import { parseAddress, parseDrepId, parsePoolId, paymentCredentialOf, stakeAddressOf } from '../addresses.ts'
import { LedgerRuleError } from '../decode.ts'
import type { Ledger } from '../ledger.ts'
import { evaluateClientTransaction } from '../scripts.ts'
import type { OutputData } from '../types.ts'
import { deserialisationFailure, submitError, type RpcErrorObject } from './errors.ts'
import {
  ada, eraStart, eraSummaries, genesisConfiguration, outputReference, point, protocolParameters, stakeCredential,
  stakePool, startTime, utxoEntry, type Json,
} from './present.ts'

/**
 * The request/response methods of Ogmios v6 over the devnet's ledger (chain synchronisation is
 * `chainsync.ts`). Each answers `{ result }` or `{ error }`; malformed parameters throw InvalidParams,
 * which the connection answers as JSON-RPC's -32602.
 */

export class InvalidParams extends Error {}

export type Outcome = { result: Json } | { error: RpcErrorObject }

type Method = (ledger: Ledger, params: Record<string, unknown>) => Outcome

const ok = (result: Json): Outcome => ({ result })

const invalid = (message: string): never => { throw new InvalidParams(message) }

function array(params: Record<string, unknown>, name: string): unknown[] | undefined {
  const value = params[name]
  if (value === undefined) return undefined
  return Array.isArray(value) ? value : invalid(`'${name}' must be an array`)
}

/** `{transaction: {cbor}}`: the transaction's bytes, or undefined when the text is not base16. */
function transactionCbor(params: Record<string, unknown>): { bytes: Uint8Array | undefined; text: string } {
  const transaction = params.transaction as { cbor?: unknown } | undefined
  if (!transaction || typeof transaction !== 'object' || typeof transaction.cbor !== 'string') return invalid("missing or malformed 'transaction.cbor': a base16 string")
  const text = transaction.cbor
  return { bytes: /^([0-9a-fA-F]{2})+$/.test(text) ? new Uint8Array(Buffer.from(text, 'hex')) : undefined, text }
}

// ---- ledger state -------------------------------------------------------------------------

/** A stake credential as Ogmios takes it: a base16 hash, a CIP-129 bech32 credential, or a stake address; as a stake address. */
function stakeAddressOfCredential(text: unknown, script: boolean): string {
  if (typeof text !== 'string') return invalid('stake credentials must be strings')
  if (/^[0-9a-fA-F]{56}$/.test(text)) {
    const hash = text.toLowerCase()
    return stakeAddressOf(script ? CSL.Credential.from_scripthash(CSL.ScriptHash.from_hex(hash)) : CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_hex(hash)))
  }
  try {
    if (/^stake(_test)?1/.test(text)) return stakeAddressOf(CSL.RewardAddress.from_address(CSL.Address.from_bech32(text))!.payment_cred())
    if (/^stake_vkh1/.test(text)) return stakeAddressOf(CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_bech32(text)))
    if (/^script1/.test(text)) return stakeAddressOf(CSL.Credential.from_scripthash(CSL.ScriptHash.from_bech32(text)))
  } catch {
    // falls through to the error below
  }
  return invalid(`'${text}' is not a stake credential (base16 hash, stake address or bech32 credential)`)
}

function rewardAccountSummaries(ledger: Ledger, params: Record<string, unknown>): Outcome {
  const wanted = [
    ...(array(params, 'keys') ?? []).map(key => stakeAddressOfCredential(key, false)),
    ...(array(params, 'scripts') ?? []).map(script => stakeAddressOfCredential(script, true)),
  ]
  const summaries: Json[] = []
  for (const stakeAddress of new Set(wanted)) {
    const account = ledger.accounts.get(stakeAddress)
    if (!account?.registered) continue
    const drep = account.drep
    summaries.push({
      ...stakeCredential(stakeAddress),
      ...(account.pool ? { stakePool: { id: ledger.pools.get(account.pool)?.id ?? account.pool } } : {}),
      ...(drep ? { delegateRepresentative: drep === 'drep_always_abstain' ? { type: 'abstain' } : drep === 'drep_always_no_confidence' ? { type: 'noConfidence' } : { type: 'registered', id: drep, from: 'verificationKey' } } : {}),
      rewards: ada(account.rewards),
      deposit: ada(account.deposit),
    })
  }
  return ok(summaries)
}

function stakePools(ledger: Ledger, params: Record<string, unknown>): Outcome {
  const filter = array(params, 'stakePools')?.map(entry => {
    const id = (entry as { id?: unknown } | null)?.id
    return (typeof id === 'string' && parsePoolId(id)) || invalid("'stakePools' must list objects { id: <pool id> }")
  })
  if (params.includeStake !== undefined && typeof params.includeStake !== 'boolean') invalid("'includeStake' must be a boolean")
  const live = params.includeStake ? ledger.liveStake() : undefined
  const result: Record<string, Json> = {}
  for (const pool of ledger.pools.values()) {
    if (filter && !filter.includes(pool.hex)) continue
    result[pool.id] = { ...stakePool(pool), ...(live ? { stake: ada(live.pools.get(pool.hex) ?? 0n) } : {}) }
  }
  return ok(result)
}

function utxo(ledger: Ledger, params: Record<string, unknown>): Outcome {
  const addresses = array(params, 'addresses')
  const references = array(params, 'outputReferences')
  if (addresses && references) invalid("give either 'addresses' or 'outputReferences', not both")
  if (addresses) {
    const outputs = addresses.flatMap(address => {
      if (typeof address !== 'string' || !parseAddress(address)) return invalid(`'${String(address)}' is not an address`)
      return ledger.unspentAt(address)
    })
    return ok(outputs.map(utxoEntry))
  }
  if (references) {
    const outputs = references.flatMap(reference => {
      const { transaction, index } = (reference ?? {}) as { transaction?: { id?: unknown }; index?: unknown }
      if (typeof transaction?.id !== 'string' || !/^[0-9a-fA-F]{64}$/.test(transaction.id) || !Number.isInteger(index) || (index as number) < 0) {
        return invalid("'outputReferences' must list objects { transaction: { id }, index }")
      }
      const output = ledger.output(`${transaction.id.toLowerCase()}#${index}`)
      return output ? [output] : []
    })
    return ok(outputs.map(utxoEntry))
  }
  return ok([...ledger.outputs.values()].filter(output => !output.spentBy).map(utxoEntry))
}

function liveStakeDistribution(ledger: Ledger): Outcome {
  const live = ledger.liveStake()
  const result: Record<string, Json> = {}
  for (const pool of ledger.pools.values()) {
    const stake = live.pools.get(pool.hex) ?? 0n
    result[pool.id] = { stake: live.total === 0n ? '0/1' : ratioOf(stake, live.total), vrf: pool.vrfKeyHash }
  }
  return ok(result)
}

function ratioOf(numerator: bigint, denominator: bigint) {
  let [a, b] = [numerator, denominator]
  while (b !== 0n) [a, b] = [b, a % b]
  return `${numerator / a}/${denominator / a}`
}

/** A DRep credential as Ogmios takes it: a base16 hash or a bech32 DRep id (CIP-105 or CIP-129); its hash. */
function drepCredentialOf(text: unknown): string {
  if (typeof text === 'string' && /^drep/.test(text)) {
    try {
      const drep = CSL.DRep.from_bech32(text)
      const hash = drep.to_key_hash()?.to_hex() ?? drep.to_script_hash()?.to_hex()
      if (hash) return hash
    } catch {
      // falls through to the error below
    }
  }
  return (typeof text === 'string' && parseDrepId(text)) || invalid(`'${String(text)}' is not a DRep credential (base16 hash or bech32 DRep id)`)
}

/** The registered accounts delegating their votes to `drep` (a key hash or `drep_always_…`), with their credentials and stake. */
function votesDelegatedTo(ledger: Ledger, drep: string) {
  const accounts = [...ledger.accounts.values()].filter(account => account.registered && account.drep === drep)
  return {
    stake: ada(accounts.reduce((sum, account) => sum + ledger.controlledStake(account.stakeAddress), 0n)),
    delegators: accounts.map(account => stakeCredential(account.stakeAddress)),
  }
}

/**
 * The registered DReps (all, or those asked for by `keys`; devnet DReps have no scripts), each with
 * its mandate (the last epoch it counts as active: its last activity plus the DRep activity
 * period), deposit, delegated stake and delegators; without a filter, the predefined
 * `abstain` and `noConfidence` choices too.
 */
function delegateRepresentatives(ledger: Ledger, params: Record<string, unknown>): Outcome {
  const keys = array(params, 'keys')?.map(drepCredentialOf)
  const scripts = array(params, 'scripts')?.map(drepCredentialOf)
  const filtered = keys !== undefined || scripts !== undefined
  const summaries: Json[] = []
  for (const drep of ledger.dreps.values()) {
    if (filtered && !keys?.includes(drep.hex)) continue
    summaries.push({
      type: 'registered', id: drep.hex, from: 'verificationKey',
      mandate: { epoch: drep.lastActiveEpoch + ledger.params.drepActivity },
      deposit: ada(drep.deposit),
      ...votesDelegatedTo(ledger, drep.hex),
    })
  }
  if (!filtered) {
    summaries.push({ type: 'abstain', ...votesDelegatedTo(ledger, 'drep_always_abstain') })
    summaries.push({ type: 'noConfidence', ...votesDelegatedTo(ledger, 'drep_always_no_confidence') })
  }
  return ok(summaries)
}

const treasuryAndReserves = (ledger: Ledger): Outcome => ok({ treasury: ada(ledger.pots.treasury), reserves: ada(ledger.pots.reserves) })

// ---- transactions -------------------------------------------------------------------------

function submitTransaction(ledger: Ledger, params: Record<string, unknown>): Outcome {
  const { bytes, text } = transactionCbor(params)
  if (!bytes) return { error: deserialisationFailure(`'${text.slice(0, 32)}${text.length > 32 ? '…' : ''}' is not base16-encoded CBOR`) }
  try {
    return ok({ transaction: { id: ledger.submit(bytes) } })
  } catch (error) {
    if (error instanceof LedgerRuleError) return { error: submitError(error, ledger, bytes) }
    throw error
  }
}

const PURPOSES: Record<RedeemerTag, string> = { spend: 'spend', mint: 'mint', cert: 'publish', reward: 'withdraw', vote: 'vote', propose: 'propose' }

interface UtxoEntry {
  transaction?: { id?: unknown }
  index?: unknown
  address?: unknown
  value?: { ada?: { lovelace?: unknown } } & Record<string, unknown>
  datumHash?: unknown
  datum?: unknown
  script?: { language?: unknown; cbor?: unknown }
}

/** Ogmios' additional UTxO entries (`{transaction: {id}, index, address, value, datumHash?, datum?, script?}`). */
function additionalUtxo(entries: unknown[]): Map<string, OutputData> {
  const outputs = new Map<string, OutputData>()
  entries.forEach((entry, i) => {
    const e = (entry ?? {}) as UtxoEntry
    const id = e.transaction?.id
    if (typeof id !== 'string' || !/^[0-9a-fA-F]{64}$/.test(id) || !Number.isInteger(e.index)) invalid(`additionalUtxo[${i}] needs transaction.id and index`)
    const address = typeof e.address === 'string' ? parseAddress(e.address) : undefined
    if (!address) invalid(`additionalUtxo[${i}].address is not an address`)
    const coin = e.value?.ada?.lovelace
    if (typeof coin !== 'number' && typeof coin !== 'bigint') invalid(`additionalUtxo[${i}].value.ada.lovelace must be an integer`)
    const assets = new Map<string, bigint>()
    for (const [policy, named] of Object.entries(e.value ?? {})) {
      if (policy === 'ada') continue
      if (!/^[0-9a-fA-F]{56}$/.test(policy) || !named || typeof named !== 'object') invalid(`additionalUtxo[${i}].value has a malformed policy '${policy}'`)
      for (const [name, quantity] of Object.entries(named as object)) assets.set(policy.toLowerCase() + name.toLowerCase(), BigInt(quantity as number))
    }
    let script: CSL.ScriptRef | null = null
    if (e.script !== undefined) {
      const language = e.script?.language
      if (language === 'native') script = CSL.ScriptRef.new_native_script(CSL.NativeScript.from_hex(String(e.script!.cbor)))
      else {
        const version = /^plutus:v([123])$/.exec(String(language))?.[1]
        const bytes = version && plutusScriptBytes(new Uint8Array(Buffer.from(String(e.script!.cbor), 'hex')))
        if (!bytes) invalid(`additionalUtxo[${i}].script is not a native or Plutus script`)
        const languages = [CSL.Language.new_plutus_v1(), CSL.Language.new_plutus_v2(), CSL.Language.new_plutus_v3()]
        script = CSL.ScriptRef.new_plutus_script(CSL.PlutusScript.new_with_version(bytes as Uint8Array, languages[Number(version) - 1]))
      }
    }
    outputs.set(`${(id as string).toLowerCase()}#${e.index}`, {
      address: e.address as string,
      payment: paymentCredentialOf(address!),
      stakeAddress: null,
      value: { coin: BigInt(coin as number | bigint), assets },
      dataHash: typeof e.datumHash === 'string' ? e.datumHash : null,
      inlineDatum: typeof e.datum === 'string' ? e.datum : null,
      referenceScriptHash: script ? (script.plutus_script()?.hash() ?? script.native_script()!.hash()).to_hex() : null,
      referenceScript: script?.to_hex() ?? null,
    })
  })
  return outputs
}

function evaluateTransaction(ledger: Ledger, params: Record<string, unknown>): Outcome {
  const { bytes, text } = transactionCbor(params)
  let additional: Map<string, OutputData>
  try {
    additional = additionalUtxo(array(params, 'additionalUtxo') ?? [])
  } catch (error) {
    if (error instanceof InvalidParams) throw error
    return invalid(`malformed 'additionalUtxo': ${(error as Error).message}`)
  }
  if (!bytes) return { error: deserialisationFailure(`'${text.slice(0, 32)}${text.length > 32 ? '…' : ''}' is not base16-encoded CBOR`) }
  try {
    // Well-formed and shallow before CSL sees it, as for submissions.
    readCbor(bytes)
    CSL.FixedTransaction.from_bytes(bytes)
  } catch (error) {
    return { error: deserialisationFailure(`the transaction is not valid Conway-era CBOR (${(error as Error)?.message ?? error})`) }
  }
  const overlap = [...additional.keys()].filter(ref => ledger.pendingView.output(ref))
  if (overlap.length) {
    return { error: { code: 3002, message: 'Some user-provided additional UTxO entries overlap with those that exist in the ledger.', data: { overlappingOutputReferences: overlap.map(outputReference) } } }
  }
  try {
    const budgets = evaluateClientTransaction(bytes, ref => additional.get(ref) ?? ledger.pendingView.output(ref), ledger.params, ledger.slotConfig)
    return ok(budgets.map(b => ({ validator: { purpose: PURPOSES[b.tag], index: b.index }, budget: { memory: b.mem, cpu: b.steps } })))
  } catch (error) {
    if (!(error instanceof ScriptFailure)) throw error
    if (!error.redeemer) return { error: { code: 3004, message: `Unable to create the evaluation context: ${error.reason}`, data: { reason: error.reason } } }
    return {
      error: {
        code: 3010,
        message: 'Some scripts of the transactions terminated with error(s).',
        data: [{
          validator: { purpose: PURPOSES[error.redeemer.tag], index: error.redeemer.index },
          error: { code: 3012, message: 'Some of the scripts failed to evaluate to a positive outcome.', data: { validationError: error.reason, traces: error.logs } },
        }],
      },
    }
  }
}

// ---- the table ----------------------------------------------------------------------------

const GENESIS_ERAS = ['byron', 'shelley', 'alonzo', 'conway']

export const METHODS: Record<string, Method> = {
  'queryNetwork/tip': ledger => ok(point(ledger.tip)),
  'queryNetwork/blockHeight': ledger => ok(ledger.tip.height),
  'queryNetwork/startTime': ledger => ok(startTime(ledger)),
  'queryNetwork/genesisConfiguration': (ledger, params) => {
    if (typeof params.era !== 'string' || !GENESIS_ERAS.includes(params.era)) invalid(`'era' must be one of ${GENESIS_ERAS.join(', ')}`)
    return ok(genesisConfiguration(ledger, params.era as string))
  },
  'queryLedgerState/tip': ledger => ok(point(ledger.tip)),
  'queryLedgerState/epoch': ledger => ok(ledger.currentEpoch),
  'queryLedgerState/eraStart': () => ok(eraStart()),
  'queryLedgerState/eraSummaries': ledger => ok(eraSummaries(ledger)),
  'queryLedgerState/protocolParameters': ledger => ok(protocolParameters(ledger)),
  'queryLedgerState/stakePools': stakePools,
  'queryLedgerState/rewardAccountSummaries': rewardAccountSummaries,
  'queryLedgerState/utxo': utxo,
  'queryLedgerState/liveStakeDistribution': liveStakeDistribution,
  'queryLedgerState/delegateRepresentatives': delegateRepresentatives,
  'queryLedgerState/treasuryAndReserves': treasuryAndReserves,
  submitTransaction,
  evaluateTransaction,
}
