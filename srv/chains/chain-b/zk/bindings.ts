import type { ZkClaim } from '../port.ts'
import { claimKeyOf, type VaultState } from '../vault.ts'
import { fieldOfHex } from './field.ts'
import { signalsByName } from './verifier.ts'

/**
 * What ties a verified proof to the vault: its public signals name the caller as attester and the
 * documents it is about, with the content roots anchored for them, and the claim is not recorded
 * yet. The vault checks this when it executes recordAttestations; the service before it queues.
 */

export type BindingFailure = { code: 'ATTESTER_MISMATCH' | 'SAME_DOCUMENT' | 'PAYLOAD_MISMATCH' | 'DOCUMENT_NOT_ANCHORED' | 'NO_CONTENT_ROOT' | 'CONTENT_ROOT_MISMATCH' | 'ALREADY_PROVEN'; message: string }

export function bindingFailure(state: VaultState, claim: ZkClaim, attesterId: string): BindingFailure | undefined {
  const signals = signalsByName(claim)
  if (signals.attester !== fieldOfHex(attesterId))
    return { code: 'ATTESTER_MISMATCH', message: `the ${claim.circuit} proof names another attester than the caller (prove with your attesterId as the attester input)` }
  if (claim.payloadHashB !== undefined && claim.payloadHashB === claim.payloadHash) return { code: 'SAME_DOCUMENT', message: 'a comparison needs two different documents' }
  const documents = claim.payloadHashB !== undefined
    ? [[claim.payloadHash, 'payloadA', 'rootA'], [claim.payloadHashB, 'payloadB', 'rootB']]
    : [[claim.payloadHash, 'payload', 'root']]
  for (const [payloadHash, payloadSignal, rootSignal] of documents) {
    if (signals[payloadSignal] !== fieldOfHex(payloadHash)) return { code: 'PAYLOAD_MISMATCH', message: `the ${claim.circuit} proof is not about the document ${payloadHash}` }
    const document = state.documents[payloadHash]
    if (!document) return { code: 'DOCUMENT_NOT_ANCHORED', message: `no document ${payloadHash} is anchored on the vault` }
    if (!document.contentRoot) return { code: 'NO_CONTENT_ROOT', message: `the document ${payloadHash} has no content root on the vault` }
    if (signals[rootSignal] !== BigInt('0x' + document.contentRoot)) return { code: 'CONTENT_ROOT_MISMATCH', message: `the ${claim.circuit} proof is about another content root than the one anchored for ${payloadHash}` }
  }
  if (state.attestations[claimKeyOf(claim.circuit, claim.publicSignals)]) return { code: 'ALREADY_PROVEN', message: `this ${claim.circuit} claim is recorded already` }
  return undefined
}
