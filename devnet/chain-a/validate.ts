import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { addressNetworkId, checkedVkeyWitnesses, cslAddress, listOf, nativeScriptSatisfied, sortedRefs, type Credential } from '../../srv/chains/chain-a/csl.ts'
import { addValue, describeValue, lovelace, sumValues, valuesEqual } from '../../srv/chains/chain-a/value.ts'
import { fail, type AccountState, type Candidate, type PlutusPurpose, type Rule, type ValidationContext } from './candidate.ts'
import { blake2b256Hex } from './crypto.ts'
import { decodeTransaction } from './decode.ts'
import { GENESIS } from './params.ts'
import {
  availableScripts, collateralSufficient, datumsPresent, declaredRedeemers, exUnitsWithinLimits, redeemersMatchPurposes, scriptDataHashMatches,
  scriptFees, scriptsValidate, scriptWitnessesNotExtraneous,
} from './scripts.ts'
import type { LedgerTx } from './types.ts'

/**
 * Transaction validation, as the ledger rules of the node apply it. Phase one is a list of named
 * rules run in order; each throws a LedgerRuleError whose message starts with the node's name for
 * the rule (e.g. `BadInputsUTxO: ...`). Phase two (running Plutus scripts, `scripts.ts`) runs after
 * phase one passed.
 */


export function validateTransaction(bytes: Uint8Array, context: ValidationContext): LedgerTx {
  const decoded = decodeTransaction(bytes, context.params.keyDeposit)
  const candidate: Candidate = {
    ...decoded,
    resolvedInputs: [], resolvedReferenceInputs: [], resolvedCollateral: [], deposits: 0n, refunds: 0n, signers: new Set(),
    scripts: new Map(), neededScripts: [], plutusPurposes: [], redeemers: declaredRedeemers(decoded.witnesses),
  }
  for (const rule of PHASE_ONE) rule(candidate, context)
  for (const rule of PHASE_TWO) rule(candidate, context)
  return { ...candidate.tx, deposit: candidate.deposits - candidate.refunds }
}

const notDuplicate: Rule = ({ tx }, { view }) => {
  const where = view.transactionLocation(tx.hash)
  if (where) fail('DuplicateTransaction', `transaction ${tx.hash} is already ${where === 'chain' ? 'on chain' : 'in the mempool'}`)
}

const noGovernanceActions: Rule = ({ body }) => {
  const votes = body.voting_procedures()?.get_voters().len() ?? 0
  const proposals = body.voting_proposals()?.len() ?? 0
  if (votes + proposals > 0) fail('GovernanceNotSupported', `the transaction carries votes of ${votes} voter(s) and ${proposals} proposal(s); the devnet does not accept governance actions`)
}

const withinMaxSize: Rule = ({ tx }, { params }) => {
  if (tx.size > params.maxTxSize) fail('MaxTxSizeUTxO', `transaction size ${tx.size} exceeds the maximum ${params.maxTxSize}`)
}

const hasInputs: Rule = ({ tx }) => {
  if (tx.inputs.length === 0) fail('InputSetEmptyUTxO', 'the transaction spends no inputs')
}

const inputsExist: Rule = (candidate, { view }) => {
  const { inputs, referenceInputs, collateral } = candidate.tx
  for (const ref of [...inputs, ...referenceInputs, ...collateral]) {
    if (!view.output(ref)) fail('BadInputsUTxO', `input ${ref} does not exist or is already spent`)
  }
  candidate.resolvedInputs = inputs.map(ref => view.output(ref)!)
  candidate.resolvedReferenceInputs = referenceInputs.map(ref => view.output(ref)!)
  candidate.resolvedCollateral = collateral.map(ref => view.output(ref)!)
  candidate.scripts = availableScripts(candidate)
}

const withinValidityInterval: Rule = ({ tx }, { slot }) => {
  const current = BigInt(slot)
  if (tx.invalidBefore !== null && current < tx.invalidBefore) fail('OutsideValidityIntervalUTxO', `current slot ${slot} is before invalid_before ${tx.invalidBefore}`)
  if (tx.invalidHereafter !== null && current >= tx.invalidHereafter) fail('OutsideValidityIntervalUTxO', `current slot ${slot} is not before invalid_hereafter ${tx.invalidHereafter}`)
}

/** The outputs the ledger checks for size and network: the outputs and the collateral return. */
function checkedOutputs({ cslOutputs, body }: Candidate): [string, CSL.TransactionOutput][] {
  const outputs = cslOutputs.map((output, index): [string, CSL.TransactionOutput] => [`output ${index}`, output])
  const collateralReturn = body.collateral_return()
  return collateralReturn ? [...outputs, ['the collateral return', collateralReturn]] : outputs
}

const onThisNetwork: Rule = (candidate) => {
  const { tx, body } = candidate
  for (const [name, output] of checkedOutputs(candidate)) {
    if (output.address().network_id() !== GENESIS.networkId) fail('WrongNetwork', `${name} pays to an address of network ${output.address().network_id()}, expected ${GENESIS.networkId}`)
  }
  for (const { stakeAddress } of tx.withdrawals) {
    const network = addressNetworkId(cslAddress(stakeAddress))
    if (network !== GENESIS.networkId) fail('WrongNetworkWithdrawal', `withdrawal from ${stakeAddress} is on network ${network}, expected ${GENESIS.networkId}`)
  }
  const bodyNetwork = body.network_id()
  if (bodyNetwork && bodyNetwork.kind() !== CSL.NetworkIdKind.Testnet) fail('WrongNetworkInTxBody', `the body names network ${bodyNetwork.kind()}, expected ${GENESIS.networkId}`)
}

const outputsHoldMinimumAda: Rule = (candidate, { params }) => {
  const dataCost = CSL.DataCost.new_coins_per_byte(CSL.BigNum.from_str(String(params.coinsPerUtxoByte)))
  for (const [name, output] of checkedOutputs(candidate)) {
    const needed = BigInt(CSL.min_ada_for_output(output, dataCost).to_str())
    const held = BigInt(output.amount().coin().to_str())
    if (held < needed) fail('BabbageOutputTooSmallUTxO', `${name} holds ${held} lovelace, needs at least ${needed}`)
  }
}

const outputValuesFit: Rule = (candidate, { params }) => {
  for (const [name, output] of checkedOutputs(candidate)) {
    const size = output.amount().to_bytes().length
    if (size > params.maxValSize) fail('OutputTooBigUTxO', `the value of ${name} is ${size} bytes, the maximum is ${params.maxValSize}`)
  }
}

/** min_fee_a × size + min_fee_b, plus the declared execution units at their prices and the reference-script fee. */
const feeCoversCosts: Rule = (candidate, { params }) => {
  const { tx } = candidate
  const sizeFee = BigInt(params.minFeeA) * BigInt(tx.size) + BigInt(params.minFeeB)
  const scriptsFee = scriptFees(candidate, params)
  const minimum = sizeFee + scriptsFee
  if (tx.fee < minimum) fail('FeeTooSmallUTxO', `fee ${tx.fee} is below the minimum ${minimum}${scriptsFee > 0n ? ` (${sizeFee} for the size, ${scriptsFee} for scripts)` : ''}`)
}

const auxiliaryDataMatchesHash: Rule = ({ fixed, body }) => {
  const raw = fixed.raw_auxiliary_data()
  const declared = body.auxiliary_data_hash()?.to_hex()
  if (raw && !declared) fail('MissingTxBodyMetadataHash', 'the transaction carries auxiliary data but its body has no auxiliary data hash')
  if (!raw && declared) fail('MissingTxMetadata', `the body declares auxiliary data hash ${declared} but the transaction carries none`)
  if (raw && declared && blake2b256Hex(raw) !== declared) fail('ConflictingMetadataHash', `the body declares auxiliary data hash ${declared}, the auxiliary data hashes to ${blake2b256Hex(raw)}`)
}

/** Certificates in order, against the accounts as they stand before and during this transaction. */
const certificatesAllowed: Rule = (candidate, { view, params }) => {
  const accounts = new Map<string, AccountState | undefined>()
  const accountOf = (stakeAddress: string) => (accounts.has(stakeAddress) ? accounts.get(stakeAddress) : view.account(stakeAddress))
  for (const cert of candidate.tx.certificates) {
    if (cert.kind === 'registration') {
      if (accountOf(cert.stakeAddress)?.registered) fail('StakeKeyRegisteredDELEG', `stake credential ${cert.stakeAddress} is already registered`)
      if (cert.deposit !== params.keyDeposit) fail('IncorrectDepositDELEG', `registration deposit ${cert.deposit} differs from the key deposit ${params.keyDeposit}`)
      accounts.set(cert.stakeAddress, { registered: true, deposit: cert.deposit, rewards: 0n, drep: null })
      candidate.deposits += cert.deposit
    } else if (cert.kind === 'deregistration') {
      const account = accountOf(cert.stakeAddress)
      if (!account?.registered) fail('StakeKeyNotRegisteredDELEG', `stake credential ${cert.stakeAddress} is not registered`)
      if (account!.rewards > 0n) fail('StakeKeyNonZeroAccountBalanceDELEG', `stake credential ${cert.stakeAddress} still holds ${account!.rewards} lovelace of rewards`)
      if (candidate.implicitRefunds.has(cert)) cert.refund = account!.deposit
      else if (cert.refund !== account!.deposit) fail('RefundIncorrectDELEG', `refund ${cert.refund} differs from the deposit ${account!.deposit} that was paid`)
      accounts.set(cert.stakeAddress, { ...account!, registered: false })
      candidate.refunds += cert.refund
    } else if (cert.kind === 'delegation' || cert.kind === 'vote_delegation') {
      const account = accountOf(cert.stakeAddress)
      if (!account?.registered) fail('StakeDelegationImpossibleDELEG', `stake credential ${cert.stakeAddress} is not registered`)
      if (cert.kind === 'delegation' && !view.poolRegistered(cert.pool)) fail('DelegateeNotRegisteredDELEG', `pool ${cert.pool} is not registered`)
      if (cert.kind === 'vote_delegation') {
        if (!cert.drep.startsWith('drep_always') && !view.drepRegistered(cert.drep)) fail('DelegateeDRepNotRegisteredDELEG', `DRep ${cert.drep} is not registered`)
        accounts.set(cert.stakeAddress, { ...account!, drep: cert.drep })
      }
    }
  }
}

const withdrawalsDrainRewards: Rule = ({ tx }, { view }) => {
  for (const { stakeAddress, amount } of tx.withdrawals) {
    const account = view.account(stakeAddress)
    if (!account?.registered || account.rewards !== amount) {
      fail('WithdrawalsNotInRewardsCERTS', `withdrawal of ${amount} from ${stakeAddress} does not match its reward balance ${account?.registered ? account.rewards : 'none (not registered)'}`)
    }
    if (!account!.drep) fail('ConwayWdrlNotDelegatedToDRep', `${stakeAddress} must delegate its vote to a DRep before withdrawing rewards`)
  }
}

const valueConserved: Rule = (candidate) => {
  const { tx } = candidate
  const consumed = sumValues(candidate.resolvedInputs.map(input => input.value))
  addValue(consumed, lovelace(tx.withdrawals.reduce((sum, w) => sum + w.amount, 0n) + candidate.refunds))
  addValue(consumed, { coin: 0n, assets: tx.mint })
  const produced = sumValues(tx.outputs.map(output => output.value))
  addValue(produced, lovelace(tx.fee + candidate.deposits + tx.treasuryDonation))
  if (!valuesEqual(consumed, produced)) fail('ValueNotConservedUTxO', `consumed ${describeValue(consumed)}, produced ${describeValue(produced)}`)
}

const vkeyWitnessesValid: Rule = (candidate) => {
  const bodyHash = candidate.fixed.transaction_hash().to_bytes()
  for (const { keyHash, valid } of checkedVkeyWitnesses(candidate.witnesses.vkeys(), bodyHash)) {
    if (!valid) fail('InvalidWitnessesUTXOW', `the signature of key ${keyHash} does not verify against the transaction body`)
    candidate.signers.add(keyHash)
  }
}

/** Credentials that must authorise the transaction: spent inputs, collateral, certificates, withdrawals. */
function requiredCredentials(candidate: Candidate): Credential[] {
  const fromInputs = [...candidate.resolvedInputs, ...candidate.resolvedCollateral].map(input =>
    input.payment ?? fail('MissingVKeyWitnessesUTXOW', `input ${input.ref} is a Byron address; bootstrap witnesses are not accepted by the devnet`))
  return [...fromInputs, ...candidate.requiredCredentials]
}

const vkeyWitnessesPresent: Rule = (candidate) => {
  const needed = new Set(requiredCredentials(candidate).filter(c => c.type === 'key').map(c => c.hash))
  for (const signer of listOf(candidate.body.required_signers())) needed.add(signer.to_hex())
  for (const hash of needed) if (!candidate.signers.has(hash)) fail('MissingVKeyWitnessesUTXOW', `missing signature of key hash ${hash}`)
}

/**
 * Script credentials (script-locked inputs, minting policies, script stake credentials) need a
 * script, from the witness set or a reference script. Native scripts must be satisfied here;
 * Plutus scripts become purposes that phase two runs (spending and minting; Plutus V3).
 */
const scriptWitnessesSatisfied: Rule = (candidate, { slot }) => {
  const { tx, scripts } = candidate
  const inputOrder = sortedRefs(tx.inputs)
  const policies = [...new Set([...tx.mint.keys()].map(unit => unit.slice(0, 56)))].sort()
  const spending = candidate.resolvedInputs.filter(input => input.payment?.type === 'script')
  const other = [...candidate.requiredCredentials].filter(c => c.type === 'script').map(c => c.hash)
  const needs: { hash: string; purpose: Omit<PlutusPurpose, 'scriptHash' | 'language'> | null }[] = [
    ...spending.map(input => ({ hash: input.payment!.hash, purpose: { tag: 'spend' as const, index: inputOrder.indexOf(input.ref), spent: input } })),
    ...policies.map((hash, index) => ({ hash, purpose: { tag: 'mint' as const, index, spent: null } })),
    ...other.map(hash => ({ hash, purpose: null })),
  ]
  candidate.neededScripts = [...new Set(needs.map(need => need.hash))]
  for (const { hash, purpose } of needs) {
    const script = scripts.get(hash) ?? fail('MissingScriptWitnessesUTXOW', `no script witness for script hash ${hash}`)
    if (script.native) {
      if (!nativeScriptSatisfied(script.native, candidate.signers, tx)) {
        fail('ScriptWitnessNotValidatingUTXOW', `native script ${hash} is not satisfied by the signatures and validity interval at slot ${slot}`)
      }
      continue
    }
    if (script.language !== 'PlutusV3') fail('PlutusNotSupported', `script ${hash} is ${script.language}; the devnet runs Plutus V3 scripts only`)
    if (!purpose) fail('PlutusNotSupported', `script ${hash} guards a certificate or withdrawal; the devnet runs Plutus scripts for spending and minting only`)
    candidate.plutusPurposes.push({ ...purpose!, scriptHash: hash, language: script.language! })
  }
}

const PHASE_ONE: Rule[] = [
  notDuplicate,
  noGovernanceActions,
  withinMaxSize,
  hasInputs,
  inputsExist,
  withinValidityInterval,
  onThisNetwork,
  outputsHoldMinimumAda,
  outputValuesFit,
  feeCoversCosts,
  auxiliaryDataMatchesHash,
  certificatesAllowed,
  withdrawalsDrainRewards,
  valueConserved,
  vkeyWitnessesValid,
  vkeyWitnessesPresent,
  scriptWitnessesSatisfied,
  scriptWitnessesNotExtraneous,
  redeemersMatchPurposes,
  datumsPresent,
  scriptDataHashMatches,
  collateralSufficient,
  exUnitsWithinLimits,
]

const PHASE_TWO: Rule[] = [scriptsValidate]
