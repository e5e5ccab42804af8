import cds from '@sap/cds'
import { SigningPolicies } from '#cds-models/chainasign'
import {
  evaluatePolicies, parseSigningPolicies, policyRequestFromTx, type PolicyViolation, type SigningPolicyRules,
} from '../chains/chain-a/signing/policies.ts'
import { badInput } from '../lib/errors.ts'

/**
 * Signing policies as stored in SigningPolicies: every active one applies, in the order of their
 * names; the first violated rule refuses the request.
 */

const { SELECT } = cds.ql

interface PolicySubject {
  unsignedTxCbor: string
  signerType: string
  senderAddresses: string[]
  expiresInSeconds: number
}

/** The first violation of the active policies; undefined when they all allow the request. */
export async function policyViolation(subject: PolicySubject): Promise<PolicyViolation | undefined> {
  const rows = await SELECT.from(SigningPolicies).columns('name', 'rules').where({ active: true }).orderBy('name')
  const policies = parseSigningPolicies(rows.map(row => ({ name: row.name, rules: parseRules(row.rules, row.name!) })))
  const { unsignedTxCbor, ...request } = subject
  return evaluatePolicies(policies, policyRequestFromTx(unsignedTxCbor, request))
}

/** Writes of SigningPolicies: the rules must be a valid rule set (INVALID_POLICY otherwise). */
export function checkPolicyWrite(req: cds.Request) {
  const { name, rules } = req.data as { name?: string; rules?: unknown }
  if (rules === undefined) return
  const policyName = name || 'the policy'
  parseSigningPolicies([{ name: policyName, rules: parseRules(rules, policyName) }])
}

function parseRules(text: unknown, name: string): SigningPolicyRules {
  let rules: unknown
  try {
    rules = typeof text === 'string' ? JSON.parse(text) : text
  } catch {
    throw badInput('INVALID_POLICY', `signing policy '${name}': rules must be a JSON object`, 'rules')
  }
  if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) throw badInput('INVALID_POLICY', `signing policy '${name}': rules must be a JSON object`, 'rules')
  return rules as SigningPolicyRules
}
