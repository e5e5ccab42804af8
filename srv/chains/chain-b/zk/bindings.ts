import type { ZkClaim } from '../port.ts'
import { anchorOf, claimKeyOf, type VaultDocument, type VaultState } from '../vault.ts'
import { claimRuleFailure } from './claim-rules.ts'
import { fieldOfHex } from './field.ts'
import { signalsByName } from './verifier.ts'

/**
 * What ties a verified proof to the vault: its public signals name the caller as attester and the
 * documents it is about, with the content roots of the caller's own anchors of them; its statement
 * keeps the claim rules (claim-rules.ts); and the claim is not recorded yet. The vault checks this
 * when it executes recordAttestations; the service before it queues.
 */

export type BindingFailure = {
  code: 'ATTESTER_MISMATCH' | 'SAME_DOCUMENT' | 'PAYLOAD_MISMATCH' | 'DOCUMENT_NOT_ANCHORED' | 'NO_CONTENT_ROOT' | 'CONTENT_ROOT_MISMATCH' | 'ALREADY_PROVEN' | 'VACUOUS_CLAIM' | 'INVALID_PUBLIC_SIGNALS'
  message: string
}

/** The documents a claim is about: payload hash with the names of its payload and root signals. */
const claimDocuments = (claim: { payloadHash: string; payloadHashB?: string }): [string, string, string][] => claim.payloadHashB !== undefined
  ? [[claim.payloadHash, 'payloadA', 'rootA'], [claim.payloadHashB, 'payloadB', 'rootB']]
  : [[claim.payloadHash, 'payload', 'root']]

/** The attester's anchors a claim's signals are bound to, or why they are not. */
export function boundAnchors(state: VaultState, claim: Pick<ZkClaim, 'circuit' | 'publicSignals' | 'payloadHash' | 'payloadHashB'>, attesterId: string): { anchors: VaultDocument[] } | BindingFailure {
  const signals = signalsByName(claim)
  if (claim.payloadHashB !== undefined && claim.payloadHashB === claim.payloadHash) return { code: 'SAME_DOCUMENT', message: 'a comparison needs two different documents' }
  const anchors: VaultDocument[] = []
  for (const [payloadHash, payloadSignal, rootSignal] of claimDocuments(claim)) {
    if (signals[payloadSignal] !== fieldOfHex(payloadHash)) return { code: 'PAYLOAD_MISMATCH', message: `the ${claim.circuit} proof is not about the document ${payloadHash}` }
    const anchor = anchorOf(state, payloadHash, attesterId)
    if (!anchor) return { code: 'DOCUMENT_NOT_ANCHORED', message: `the attester ${attesterId} has not anchored the document ${payloadHash} on the vault` }
    if (!anchor.contentRoot) return { code: 'NO_CONTENT_ROOT', message: `the attester's anchor of ${payloadHash} has no content root` }
    if (signals[rootSignal] !== BigInt('0x' + anchor.contentRoot)) return { code: 'CONTENT_ROOT_MISMATCH', message: `the ${claim.circuit} proof is about another content root than the one anchored for ${payloadHash}` }
    anchors.push(anchor)
  }
  const broken = claimRuleFailure(claim.circuit, signals, anchors.map(anchor => anchor.fieldCount))
  return broken ?? { anchors }
}

export function bindingFailure(state: VaultState, claim: ZkClaim, attesterId: string): BindingFailure | undefined {
  if (signalsByName(claim).attester !== fieldOfHex(attesterId))
    return { code: 'ATTESTER_MISMATCH', message: `the ${claim.circuit} proof names another attester than the caller (prove with your attesterId as the attester input)` }
  const bound = boundAnchors(state, claim, attesterId)
  if ('code' in bound) return bound
  if (state.attestations[claimKeyOf(claim.circuit, claim.publicSignals)]) return { code: 'ALREADY_PROVEN', message: `this ${claim.circuit} claim is recorded already` }
  return undefined
}
