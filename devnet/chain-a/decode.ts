import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { readCbor } from '../../srv/chains/chain-a/cbor.ts'
import { addressText, credentialOf, fromCslMint, fromCslValue, listOf, metadatumJson, paymentCredentialOf, refOfInput, type Credential } from '../../srv/chains/chain-a/csl.ts'
import { stakeAddressOf, stakeAddressOfAddress } from './addresses.ts'
import type { Certificate, LedgerTx, OutputData, TxMetadata } from './types.ts'

/**
 * Turns submitted CBOR into the ledger's plain transaction shape, keeping the CSL objects the
 * validator still needs. The hash is taken over the original body bytes (FixedTransaction), so a
 * re-serialisation by CSL can never change it.
 */

export class LedgerRuleError extends Error {
  readonly rule: string
  constructor(rule: string, detail: string) {
    super(`${rule}: ${detail}`)
    this.name = 'LedgerRuleError'
    this.rule = rule
  }
}

/** A certificate's effect plus the credential that must witness it (if any). */
interface DecodedCertificate {
  effects: Certificate[]
  witness: Credential | null
}

export interface DecodedTx {
  tx: LedgerTx
  fixed: CSL.FixedTransaction
  body: CSL.TransactionBody
  witnesses: CSL.TransactionWitnessSet
  cslOutputs: CSL.TransactionOutput[]
  /** Credentials of certificates and withdrawals that must sign or be a satisfied script. */
  requiredCredentials: Credential[]
  /** Deregistrations without an explicit refund: the ledger's recorded deposit is refunded. */
  implicitRefunds: Set<Certificate>
}

const bigintOf = (value: CSL.BigNum | undefined) => (value === undefined ? null : BigInt(value.to_str()))

export function decodeTransaction(bytes: Uint8Array, keyDeposit: bigint): DecodedTx {
  try {
    // Well-formed and shallow before CSL sees it: deep nesting would exhaust CSL's stack.
    readCbor(bytes)
    return decodeFixed(CSL.FixedTransaction.from_bytes(bytes), bytes, keyDeposit)
  } catch (error) {
    if (error instanceof LedgerRuleError) throw error
    throw new LedgerRuleError('DeserialiseFailure', `the transaction is not valid Conway-era CBOR (${(error as Error)?.message ?? error})`)
  }
}

function decodeFixed(fixed: CSL.FixedTransaction, bytes: Uint8Array, keyDeposit: bigint): DecodedTx {
  const body = fixed.body()
  const witnesses = fixed.witness_set()
  const cslOutputs = listOf(body.outputs())
  const implicitRefunds = new Set<Certificate>()
  const certificates = listOf(body.certs()).map(cert => decodeCertificate(cert, keyDeposit, implicitRefunds))
  const withdrawals = decodeWithdrawals(body.withdrawals())

  const tx: LedgerTx = {
    hash: fixed.transaction_hash().to_hex(),
    cbor: bytes,
    size: bytes.length,
    fee: BigInt(body.fee().to_str()),
    deposit: 0n,
    treasuryDonation: bigintOf(body.donation()) ?? 0n,
    invalidBefore: bigintOf(body.validity_start_interval_bignum()),
    invalidHereafter: bigintOf(body.ttl_bignum()),
    inputs: listOf(body.inputs()).map(refOfInput),
    referenceInputs: listOf(body.reference_inputs()).map(refOfInput),
    collateral: listOf(body.collateral()).map(refOfInput),
    outputs: cslOutputs.map(decodeOutput),
    collateralReturn: body.collateral_return() ? decodeOutput(body.collateral_return()!) : null,
    validContract: fixed.is_valid(),
    mint: fromCslMint(body.mint()),
    metadata: decodeMetadata(fixed.auxiliary_data()),
    withdrawals: withdrawals.map(({ stakeAddress, amount }) => ({ stakeAddress, amount })),
    certificates: certificates.flatMap(cert => cert.effects),
    redeemerCount: witnesses.redeemers()?.len() ?? 0,
  }
  const requiredCredentials = [
    ...certificates.flatMap(cert => (cert.witness ? [cert.witness] : [])),
    ...withdrawals.map(w => w.credential),
  ]
  return { tx, fixed, body, witnesses, cslOutputs, requiredCredentials, implicitRefunds }
}

function decodeOutput(output: CSL.TransactionOutput): OutputData {
  const address = output.address()
  const scriptRef = output.script_ref()
  return {
    address: addressText(address),
    payment: paymentCredentialOf(address),
    stakeAddress: stakeAddressOfAddress(address),
    value: fromCslValue(output.amount()),
    dataHash: output.data_hash()?.to_hex() ?? null,
    inlineDatum: output.plutus_data()?.to_hex() ?? null,
    referenceScriptHash: scriptRef ? (scriptRef.native_script()?.hash() ?? scriptRef.plutus_script()!.hash()).to_hex() : null,
    referenceScript: scriptRef?.to_hex() ?? null,
  }
}

function decodeMetadata(auxiliary: CSL.AuxiliaryData | undefined): TxMetadata[] {
  const metadata = auxiliary?.metadata()
  if (!metadata) return []
  return listOf(metadata.keys()).map(label => {
    const datum = metadata.get(label)!
    const single = CSL.GeneralTransactionMetadata.new()
    single.insert(label, datum)
    return { label: label.to_str(), json: JSON.parse(metadatumJson(datum)), cborHex: single.to_hex() }
  })
}

function decodeWithdrawals(withdrawals: CSL.Withdrawals | undefined) {
  if (!withdrawals) return []
  return listOf(withdrawals.keys()).map(rewardAddress => ({
    stakeAddress: rewardAddress.to_address().to_bech32(),
    credential: credentialOf(rewardAddress.payment_cred()),
    amount: BigInt(withdrawals.get(rewardAddress)!.to_str()),
  }))
}

function drepKey(drep: CSL.DRep): string {
  switch (drep.kind()) {
    case CSL.DRepKind.KeyHash: return drep.to_key_hash()!.to_hex()
    case CSL.DRepKind.ScriptHash: return drep.to_script_hash()!.to_hex()
    case CSL.DRepKind.AlwaysAbstain: return 'drep_always_abstain'
    default: return 'drep_always_no_confidence'
  }
}

function decodeCertificate(cert: CSL.Certificate, keyDeposit: bigint, implicitRefunds: Set<Certificate>): DecodedCertificate {
  const registration = (credential: CSL.Credential, coin: CSL.BigNum | undefined): Certificate =>
    ({ kind: 'registration', stakeAddress: stakeAddressOf(credential), deposit: bigintOf(coin) ?? keyDeposit, explicitDeposit: coin !== undefined })
  const delegation = (credential: CSL.Credential, pool: CSL.Ed25519KeyHash): Certificate =>
    ({ kind: 'delegation', stakeAddress: stakeAddressOf(credential), pool: pool.to_hex() })
  const vote = (credential: CSL.Credential, drep: CSL.DRep): Certificate =>
    ({ kind: 'vote_delegation', stakeAddress: stakeAddressOf(credential), drep: drepKey(drep) })
  const witnessed = (credential: CSL.Credential, ...effects: Certificate[]) => ({ effects, witness: credentialOf(credential) })

  switch (cert.kind()) {
    case CSL.CertificateKind.StakeRegistration: {
      const c = cert.as_stake_registration()!
      const effect = registration(c.stake_credential(), c.coin())
      // A pre-Conway registration (no deposit in the certificate) needs no witness.
      return { effects: [effect], witness: c.coin() === undefined ? null : credentialOf(c.stake_credential()) }
    }
    case CSL.CertificateKind.StakeDeregistration: {
      const c = cert.as_stake_deregistration()!
      const effect: Certificate = { kind: 'deregistration', stakeAddress: stakeAddressOf(c.stake_credential()), refund: bigintOf(c.coin()) ?? 0n }
      if (c.coin() === undefined) implicitRefunds.add(effect)
      return witnessed(c.stake_credential(), effect)
    }
    case CSL.CertificateKind.StakeDelegation: {
      const c = cert.as_stake_delegation()!
      return witnessed(c.stake_credential(), delegation(c.stake_credential(), c.pool_keyhash()))
    }
    case CSL.CertificateKind.VoteDelegation: {
      const c = cert.as_vote_delegation()!
      return witnessed(c.stake_credential(), vote(c.stake_credential(), c.drep()))
    }
    case CSL.CertificateKind.StakeAndVoteDelegation: {
      const c = cert.as_stake_and_vote_delegation()!
      return witnessed(c.stake_credential(), delegation(c.stake_credential(), c.pool_keyhash()), vote(c.stake_credential(), c.drep()))
    }
    case CSL.CertificateKind.StakeRegistrationAndDelegation: {
      const c = cert.as_stake_registration_and_delegation()!
      return witnessed(c.stake_credential(), registration(c.stake_credential(), c.coin()), delegation(c.stake_credential(), c.pool_keyhash()))
    }
    case CSL.CertificateKind.VoteRegistrationAndDelegation: {
      const c = cert.as_vote_registration_and_delegation()!
      return witnessed(c.stake_credential(), registration(c.stake_credential(), c.coin()), vote(c.stake_credential(), c.drep()))
    }
    case CSL.CertificateKind.StakeVoteRegistrationAndDelegation: {
      const c = cert.as_stake_vote_registration_and_delegation()!
      return witnessed(c.stake_credential(), registration(c.stake_credential(), c.coin()), delegation(c.stake_credential(), c.pool_keyhash()), vote(c.stake_credential(), c.drep()))
    }
    default:
      throw new LedgerRuleError('UnsupportedCertificate', `${CSL.CertificateKind[cert.kind()]} certificates are not accepted by the devnet (stake registration, deregistration and delegation are)`)
  }
}
