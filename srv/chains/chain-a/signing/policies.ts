import { ApiError, badInput } from '../../../lib/errors.ts'
import { addressText, listOf, paymentCredentialOf } from '../csl.ts'
import { parseTransaction } from './witnesses.ts'

/**
 * Signing policies: named rule sets a signing request must satisfy before anyone signs it. The
 * first violated rule refuses the request (the signing service answers 403 with the policy's name).
 */

export interface SigningPolicyRules {
  allowedSignerTypes?: string[]
  /** Most lovelace one transaction may send away: outputs that do not return to the sender. */
  maxLovelacePerTx?: bigint | number | string
  /** Where value may be sent: bech32 addresses, prefixes ending in `*`, or `script:<hash>` (any address paying to that script). */
  allowedRecipients?: string[]
  /** Longest time a signing request may stay open. */
  maxExpirySeconds?: number
  /** Key hashes that must be among the transaction's required signers. */
  requiredSigners?: string[]
}

export interface SigningPolicy {
  name: string
  rules: SigningPolicyRules
}

export interface PolicyOutput {
  address: string
  lovelace: bigint
}

export interface PolicyRequest {
  signerType: string
  /** The sender's addresses (spent inputs, change): outputs to them are not sent away. */
  senderAddresses: string[]
  outputs: PolicyOutput[]
  /** Key hashes in the transaction's required signers. */
  requiredSigners: string[]
  /** Seconds from the signing request's creation to its expiry. */
  expiresInSeconds: number
}

export type PolicyRule = keyof SigningPolicyRules

export interface PolicyViolation {
  policy: string
  rule: PolicyRule
  message: string
}

/** The outputs and required signers of an unsigned transaction, as a policy request. */
export function policyRequestFromTx(unsignedTxHex: string, request: Omit<PolicyRequest, 'outputs' | 'requiredSigners'>): PolicyRequest {
  const body = parseTransaction(unsignedTxHex).body()
  return {
    ...request,
    outputs: listOf(body.outputs()).map(output => ({ address: addressText(output.address()), lovelace: BigInt(output.amount().coin().to_str()) })),
    requiredSigners: listOf(body.required_signers()).map(hash => hash.to_hex()),
  }
}

/** The first violated rule of the first policy that refuses the request; undefined when all allow it. */
export function evaluatePolicies(policies: SigningPolicy[], request: PolicyRequest): PolicyViolation | undefined {
  for (const policy of policies) {
    for (const check of CHECKS) {
      const violation = check(policy.rules, request)
      if (violation) return { policy: policy.name, ...violation }
    }
  }
  return undefined
}

/** The 403 the signing service answers for a violation. */
export const policyRefusal = (violation: PolicyViolation) =>
  new ApiError(403, 'POLICY_REFUSED', `signing policy '${violation.policy}' refuses the request: ${violation.message}`, { target: violation.policy })

type Check = (rules: SigningPolicyRules, request: PolicyRequest) => Omit<PolicyViolation, 'policy'> | undefined

const signerTypeAllowed: Check = ({ allowedSignerTypes }, { signerType }) => {
  if (allowedSignerTypes && !allowedSignerTypes.includes(signerType)) {
    return { rule: 'allowedSignerTypes', message: `signer type '${signerType}' is not allowed (allowed: ${allowedSignerTypes.join(', ') || 'none'})` }
  }
}

const requiredSignersPresent: Check = ({ requiredSigners }, request) => {
  const present = new Set(request.requiredSigners.map(hash => hash.toLowerCase()))
  const missing = (requiredSigners ?? []).filter(hash => !present.has(hash.toLowerCase()))
  if (missing.length) return { rule: 'requiredSigners', message: `the transaction does not require the signature of ${missing.join(', ')}` }
}

const recipientsAllowed: Check = ({ allowedRecipients }, request) => {
  if (!allowedRecipients) return
  const refused = sentAway(request).find(output => !allowedRecipients.some(pattern => recipientMatches(pattern, output.address)))
  if (refused) return { rule: 'allowedRecipients', message: `recipient ${refused.address} is not allowed` }
}

const amountWithinLimit: Check = ({ maxLovelacePerTx }, request) => {
  if (maxLovelacePerTx === undefined) return
  const limit = BigInt(maxLovelacePerTx)
  const sent = sentAway(request).reduce((sum, output) => sum + output.lovelace, 0n)
  if (sent > limit) return { rule: 'maxLovelacePerTx', message: `the transaction sends ${sent} lovelace, more than the limit of ${limit}` }
}

const expiryWithinLimit: Check = ({ maxExpirySeconds }, { expiresInSeconds }) => {
  if (maxExpirySeconds !== undefined && expiresInSeconds > maxExpirySeconds) {
    return { rule: 'maxExpirySeconds', message: `the signing request stays open ${expiresInSeconds} s, longer than the limit of ${maxExpirySeconds} s` }
  }
}

const CHECKS: Check[] = [signerTypeAllowed, requiredSignersPresent, recipientsAllowed, amountWithinLimit, expiryWithinLimit]

/** Outputs that do not go back to the sender: neither to a sender address nor to a sender's payment credential. */
function sentAway(request: PolicyRequest): PolicyOutput[] {
  const senders = new Set(request.senderAddresses)
  const senderCredentials = new Set(request.senderAddresses.map(paymentPart).filter(Boolean))
  return request.outputs.filter(output => !senders.has(output.address) && !senderCredentials.has(paymentPart(output.address)))
}

function recipientMatches(pattern: string, address: string): boolean {
  if (pattern.startsWith('script:')) return paymentPart(address) === `script:${pattern.slice(7).toLowerCase()}`
  if (pattern.endsWith('*')) return address.startsWith(pattern.slice(0, -1))
  return address === pattern
}

/** `key:<hash>` or `script:<hash>` of an address's payment part; undefined for Byron or malformed addresses. */
function paymentPart(address: string): string | undefined {
  const credential = paymentCredentialOf(address)
  return credential ? `${credential.type}:${credential.hash}` : undefined
}

/** Policies from configuration or JSON; INVALID_POLICY when one is malformed. */
export function parseSigningPolicies(raw: unknown): SigningPolicy[] {
  if (!Array.isArray(raw)) throw invalidPolicy('signing policies must be an array')
  return raw.map(parseSigningPolicy)
}

function parseSigningPolicy(raw: { name?: unknown; rules?: Record<string, unknown> } | null): SigningPolicy {
  if (typeof raw?.name !== 'string' || !raw.name) throw invalidPolicy('a signing policy needs a name')
  const rules = raw.rules ?? {}
  const strings = (value: unknown) => value === undefined || (Array.isArray(value) && value.every(item => typeof item === 'string'))
  const where = `signing policy '${raw.name}'`
  if (!strings(rules.allowedSignerTypes) || !strings(rules.allowedRecipients) || !strings(rules.requiredSigners)) throw invalidPolicy(`${where}: list rules must be arrays of strings`)
  if (rules.maxLovelacePerTx !== undefined && !/^\d+$/.test(String(rules.maxLovelacePerTx))) throw invalidPolicy(`${where}: maxLovelacePerTx must be a whole number of lovelace`)
  const { maxExpirySeconds } = rules
  if (maxExpirySeconds !== undefined && !(typeof maxExpirySeconds === 'number' && Number.isFinite(maxExpirySeconds) && maxExpirySeconds > 0)) throw invalidPolicy(`${where}: maxExpirySeconds must be a positive number`)
  const known = new Set<string>(['allowedSignerTypes', 'maxLovelacePerTx', 'allowedRecipients', 'maxExpirySeconds', 'requiredSigners'])
  const unknown = Object.keys(rules).find(rule => !known.has(rule))
  if (unknown) throw invalidPolicy(`${where}: unknown rule '${unknown}'`)
  return { name: raw.name, rules: rules as SigningPolicyRules }
}

const invalidPolicy = (message: string) => badInput('INVALID_POLICY', message)
