import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiError } from '../../../lib/errors.ts'
import { checkedVkeyWitnesses, credentialOf, listOf, nativeScriptSatisfied, paymentCredentialOf, refOfInput, type Credential } from '../csl.ts'
import { parseTransaction } from './witnesses.ts'

/**
 * Verifies a signed transaction without submitting it: every vkey signature is checked against the
 * body hash, and the valid signers must cover everything the body needs (spent and collateral
 * inputs, required signers, withdrawals, certificates, votes, minting policies). The library has no
 * chain access, so the caller says who owns the spent inputs.
 */

/** An input's owner: its bech32 address or its payment key hash (hex); undefined when unknown. */
type InputOwnerResolver = (ref: string) => string | undefined | Promise<string | undefined>

interface VerifyOptions {
  /** The body hash of the build the signing request was made for. */
  expectedBodyHash: string
  /** Owners of the spent inputs by reference (`txHash#index`), or a resolver. */
  inputOwners: Record<string, string> | InputOwnerResolver
  /** Key hashes that must sign besides what the body implies (e.g. the build's fee payer). */
  extraSigners?: string[]
}

export interface MissingSigner {
  keyHash: string
  /** What needs the signature, e.g. `input <txHash>#0`, `required signer`, `withdrawal stake_test1…`. */
  neededFor: string
}

export interface VerificationResult {
  valid: boolean
  txHash: string
  bodyHash: string
  witnessCount: number
  /** Key hashes of the witnesses whose signature is valid. */
  signerKeyHashes: string[]
  missingSigners: MissingSigner[]
  /** Key hashes of the witnesses whose signature does not verify against the body hash. */
  invalidSignatures: string[]
  /** Anything else that makes the transaction fail: unresolved inputs, missing or unsatisfied scripts. */
  problems: string[]
}

interface Requirement {
  credential: Credential
  neededFor: string
}

/** BODY_HASH_MISMATCH or MALFORMED_CBOR for unusable input; invalid signatures are answered, not thrown. */
export async function verifySignedTransaction(signedTxHex: string, options: VerifyOptions): Promise<VerificationResult> {
  const tx = parseTransaction(signedTxHex, 'signedTxCbor')
  const bodyHash = tx.transaction_hash().to_hex()
  if (bodyHash !== options.expectedBodyHash.toLowerCase()) {
    throw new ApiError(400, 'BODY_HASH_MISMATCH', `the signed transaction's body hash ${bodyHash} is not the signing request's ${options.expectedBodyHash}`, { target: 'signedTxCbor' })
  }
  const body = tx.body()
  const witnesses = tx.witness_set()
  const vkeys = checkedVkeyWitnesses(witnesses.vkeys(), tx.transaction_hash().to_bytes())
  const signers = new Set(vkeys.filter(vkey => vkey.valid).map(vkey => vkey.keyHash))
  const invalid = vkeys.filter(vkey => !vkey.valid).map(vkey => vkey.keyHash)
  const problems: string[] = []
  const requirements = [
    ...(await inputRequirements(body, options.inputOwners, problems)),
    ...bodyRequirements(body),
    ...(options.extraSigners ?? []).map(hash => ({ credential: key(hash), neededFor: 'the signing request' })),
  ]
  const missingSigners = missingKeys(requirements, signers)
  problems.push(...scriptProblems(requirements, witnesses, signers, body))
  if (vkeys.length === 0) problems.push('the transaction has no vkey witnesses')
  return {
    valid: invalid.length === 0 && missingSigners.length === 0 && problems.length === 0,
    txHash: bodyHash,
    bodyHash,
    witnessCount: vkeys.length,
    signerKeyHashes: [...signers],
    missingSigners,
    invalidSignatures: invalid,
    problems,
  }
}

const key = (hash: string): Credential => ({ type: 'key', hash: hash.toLowerCase() })

async function inputRequirements(body: CSL.TransactionBody, owners: VerifyOptions['inputOwners'], problems: string[]): Promise<Requirement[]> {
  const resolve: InputOwnerResolver = typeof owners === 'function' ? owners : ref => owners[ref]
  const spent = [...listOf(body.inputs()), ...listOf(body.collateral())].map(refOfInput)
  const requirements: Requirement[] = []
  for (const ref of new Set(spent)) {
    const owner = await resolve(ref)
    const credential = owner === undefined ? undefined : ownerCredential(owner)
    if (credential) requirements.push({ credential, neededFor: `input ${ref}` })
    else problems.push(owner === undefined ? `the owner of input ${ref} is unknown` : `the owner of input ${ref} is not a Shelley address or key hash: ${owner}`)
  }
  return requirements
}

function ownerCredential(owner: string): Credential | undefined {
  if (/^[0-9a-fA-F]{56}$/.test(owner)) return key(owner)
  return paymentCredentialOf(owner) ?? undefined
}

/** Credentials the body itself names: required signers, withdrawals, certificates, voters and minting policies. */
function bodyRequirements(body: CSL.TransactionBody): Requirement[] {
  const requirements: Requirement[] = listOf(body.required_signers()).map(hash => ({ credential: key(hash.to_hex()), neededFor: 'required signer' }))
  const withdrawals = body.withdrawals()
  for (const rewardAddress of listOf(withdrawals?.keys())) {
    requirements.push({ credential: credentialOf(rewardAddress.payment_cred()), neededFor: `withdrawal ${rewardAddress.to_address().to_bech32()}` })
  }
  listOf(body.certs()).forEach((certificate, index) => {
    for (const credential of certificateCredentials(certificate)) requirements.push({ credential, neededFor: `certificate ${index}` })
  })
  for (const voter of listOf(body.voting_procedures()?.get_voters())) {
    if (voter) requirements.push({ credential: voterCredential(voter), neededFor: 'vote' })
  }
  for (const policy of listOf(body.mint()?.keys())) requirements.push({ credential: { type: 'script', hash: policy.to_hex() }, neededFor: `minting policy ${policy.to_hex()}` })
  return requirements
}

/** The credentials a certificate must be witnessed by (Conway rules). */
function certificateCredentials(certificate: CSL.Certificate): Credential[] {
  const Kind = CSL.CertificateKind
  switch (certificate.kind()) {
    case Kind.StakeRegistration: {
      const registration = certificate.as_stake_registration()!
      // Only the Conway registration, which states its deposit, needs a witness.
      return registration.coin() === undefined ? [] : [credentialOf(registration.stake_credential())]
    }
    case Kind.StakeDeregistration: return [credentialOf(certificate.as_stake_deregistration()!.stake_credential())]
    case Kind.StakeDelegation: return [credentialOf(certificate.as_stake_delegation()!.stake_credential())]
    case Kind.VoteDelegation: return [credentialOf(certificate.as_vote_delegation()!.stake_credential())]
    case Kind.StakeAndVoteDelegation: return [credentialOf(certificate.as_stake_and_vote_delegation()!.stake_credential())]
    case Kind.StakeRegistrationAndDelegation: return [credentialOf(certificate.as_stake_registration_and_delegation()!.stake_credential())]
    case Kind.VoteRegistrationAndDelegation: return [credentialOf(certificate.as_vote_registration_and_delegation()!.stake_credential())]
    case Kind.StakeVoteRegistrationAndDelegation: return [credentialOf(certificate.as_stake_vote_registration_and_delegation()!.stake_credential())]
    case Kind.PoolRegistration: {
      const pool = certificate.as_pool_registration()!.pool_params()
      return [key(pool.operator().to_hex()), ...listOf(pool.pool_owners()).map(owner => key(owner.to_hex()))]
    }
    case Kind.PoolRetirement: return [key(certificate.as_pool_retirement()!.pool_keyhash().to_hex())]
    case Kind.DRepRegistration: return [credentialOf(certificate.as_drep_registration()!.voting_credential())]
    case Kind.DRepDeregistration: return [credentialOf(certificate.as_drep_deregistration()!.voting_credential())]
    case Kind.DRepUpdate: return [credentialOf(certificate.as_drep_update()!.voting_credential())]
    case Kind.CommitteeHotAuth: return [credentialOf(certificate.as_committee_hot_auth()!.committee_cold_credential())]
    case Kind.CommitteeColdResign: return [credentialOf(certificate.as_committee_cold_resign()!.committee_cold_credential())]
    default: return []
  }
}

function voterCredential(voter: CSL.Voter): Credential {
  const credential = voter.to_constitutional_committee_hot_credential() ?? voter.to_drep_credential()
  return credential ? credentialOf(credential) : key(voter.to_stake_pool_key_hash()!.to_hex())
}

function missingKeys(requirements: Requirement[], signers: Set<string>): MissingSigner[] {
  const missing = new Map<string, string[]>()
  for (const { credential, neededFor } of requirements) {
    if (credential.type !== 'key' || signers.has(credential.hash)) continue
    missing.set(credential.hash, [...(missing.get(credential.hash) ?? []), neededFor])
  }
  return [...missing].map(([keyHash, reasons]) => ({ keyHash, neededFor: [...new Set(reasons)].join(', ') }))
}

/** Script credentials need a native script in the witness set that the signers satisfy; Plutus scripts are left to the ledger. */
function scriptProblems(requirements: Requirement[], witnesses: CSL.TransactionWitnessSet, signers: Set<string>, body: CSL.TransactionBody): string[] {
  const nativeScripts = new Map(listOf(witnesses.native_scripts()).map(script => [script.hash().to_hex(), script]))
  const plutusScripts = new Set(listOf(witnesses.plutus_scripts()).map(script => script.hash().to_hex()))
  const interval = { invalidBefore: bigintOf(body.validity_start_interval_bignum()), invalidHereafter: bigintOf(body.ttl_bignum()) }
  const problems: string[] = []
  const checked = new Set<string>()
  for (const { credential, neededFor } of requirements) {
    if (credential.type !== 'script' || checked.has(credential.hash) || plutusScripts.has(credential.hash)) continue
    checked.add(credential.hash)
    const script = nativeScripts.get(credential.hash)
    if (!script) problems.push(`no script witness for script ${credential.hash} (${neededFor})`)
    else if (!nativeScriptSatisfied(script, signers, interval)) problems.push(`native script ${credential.hash} (${neededFor}) is not satisfied by the signatures and validity interval`)
  }
  return problems
}

const bigintOf = (value: CSL.BigNum | undefined) => (value === undefined ? null : BigInt(value.to_str()))
