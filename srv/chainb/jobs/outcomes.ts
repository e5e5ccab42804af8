import cds from '@sap/cds'
import { Attestation, Attestations, DisclosureGrant, DisclosureGrants, Document, Documents } from '#cds-models/chainb'
import type { ZkClaim } from '../../chains/chain-b/port.ts'
import { anchorCommitment, anchorOf, claimKeyOf, type VaultState } from '../../chains/chain-b/vault.ts'
import type { ChainBAccess } from '../chain.ts'
import type { JobCommand } from './commands.ts'

const { SELECT, UPDATE } = cds.ql

/**
 * What a job's end means for the record it made: a confirmed anchor marks its document anchored,
 * a confirmed grant makes the grant active (and the grantee's earlier level superseded), a
 * confirmed revocation revokes it; a failed job marks what it was making failed.
 */

export interface Inclusion {
  txHash: string
  blockHeight: number
  /** The block's time. */
  at: string
}

/** The result a confirmed job answers in getJobStatus, JSON. */
export function confirmedResult(kind: string, command: JobCommand, inclusion: Inclusion): Record<string, unknown> {
  const args = command.call?.args ?? {}
  const base = { txHash: inclusion.txHash, blockHeight: inclusion.blockHeight, confirmedAt: inclusion.at }
  switch (kind) {
    case 'proveAttestation':
    case 'sponsorAttestation': return { attestationIds: command.attestationIds, ...base }
    case 'grantDisclosure': return { disclosureGrantId: command.disclosureGrantId, payloadHash: args.payloadHash, grantee: args.grantee, level: args.level, ...base }
    case 'revokeDisclosure': return { disclosureGrantId: command.disclosureGrantId, payloadHash: args.payloadHash, grantee: args.grantee, ...base }
    case 'commitDocumentAnchor': return { documentId: command.documentId, commitment: args.commitment, ...base }
    default: return { documentId: command.documentId, payloadHash: args.payloadHash, anchoredTxHash: inclusion.txHash, anchorHeight: inclusion.blockHeight, anchoredAt: inclusion.at, ...base }
  }
}

export async function recordConfirmation(kind: string, command: JobCommand, inclusion: Inclusion) {
  if (command.attestationIds?.length)
    await UPDATE.entity(Attestations).set({ status: Attestation.status.proven, provenTxHash: inclusion.txHash, provenHeight: inclusion.blockHeight, provenAt: inclusion.at })
      .where({ ID: { in: command.attestationIds } })
  if (command.documentId)
    await UPDATE.entity(Documents, command.documentId).set({ status: Document.status.anchored, anchoredTxHash: inclusion.txHash, anchorHeight: inclusion.blockHeight, anchoredAt: inclusion.at })
  if (kind === 'grantDisclosure' && command.disclosureGrantId) {
    const grant = await SELECT.one.from(DisclosureGrants, command.disclosureGrantId).columns('owner', 'payloadHash', 'grantee')
    // The grantee's level is the latest grant's: an earlier active grant of the same pair is superseded.
    if (grant) await UPDATE.entity(DisclosureGrants).set({ status: DisclosureGrant.status.revoked, revokedTxHash: inclusion.txHash })
      .where({ owner: grant.owner, payloadHash: grant.payloadHash, grantee: grant.grantee, status: DisclosureGrant.status.active, ID: { '!=': command.disclosureGrantId } })
    await UPDATE.entity(DisclosureGrants, command.disclosureGrantId).set({ status: DisclosureGrant.status.active, grantedTxHash: inclusion.txHash })
  }
  if (kind === 'revokeDisclosure' && command.disclosureGrantId)
    await UPDATE.entity(DisclosureGrants, command.disclosureGrantId).set({ status: DisclosureGrant.status.revoked, revokedTxHash: inclusion.txHash })
}

export async function recordFailure(kind: string, command: JobCommand) {
  if (command.attestationIds?.length) await UPDATE.entity(Attestations).set({ status: Attestation.status.failed }).where({ ID: { in: command.attestationIds } })
  if (command.documentId) await UPDATE.entity(Documents, command.documentId).set({ status: Document.status.failed })
  if (kind === 'grantDisclosure' && command.disclosureGrantId)
    await UPDATE.entity(DisclosureGrants).set({ status: DisclosureGrant.status.failed }).where({ ID: command.disclosureGrantId, status: DisclosureGrant.status.pending })
  // A failed revocation leaves the grant as it was: active.
  if (kind === 'revokeDisclosure' && command.disclosureGrantId)
    await UPDATE.entity(DisclosureGrants, command.disclosureGrantId).set({ revokeJob_ID: null })
}

/** Failures the caller's own input explains: its charge stays. Every other failure is refunded. */
export const CALLER_FAULTS = new Set(['ALREADY_ANCHORED', 'ALREADY_COMMITTED', 'COMMITMENT_NOT_FOUND', 'DOCUMENT_NOT_ANCHORED', 'GRANT_REVOKED', 'ALREADY_PROVEN'])

/**
 * Why the vault refused a call, read from its state after the failed transaction: a reason the
 * caller's input explains (the document was already anchored, is not the caller's...), else
 * CHAIN_EXECUTION_FAILED.
 */
export async function explainFailure(chain: ChainBAccess, command: JobCommand, attesterSubject: string, txHash?: string | null): Promise<{ code: string; message: string }> {
  let state: VaultState
  try {
    state = await chain.vaultState()
  } catch {
    return { code: 'CHAIN_EXECUTION_FAILED', message: 'the vault refused the call' }
  }
  if (!command.call) return { code: 'CHAIN_EXECUTION_FAILED', message: 'the vault refused the call' }
  const { circuit, args } = command.call
  if (circuit === 'recordAttestations' && (args.claims as ZkClaim[]).some(claim => { const recorded = state.attestations[claimKeyOf(claim.circuit, claim.publicSignals)]; return recorded && recorded.txHash !== txHash }))
    return { code: 'ALREADY_PROVEN', message: 'a claim of the job is recorded on the vault already' }
  const payloadHash = String(args.payloadHash ?? '')
  const attester = chain.attesterKey(attesterSubject).id
  const document = anchorOf(state, payloadHash, attester)
  if (['attest', 'attestAgentOutput', 'revealAnchor'].includes(circuit) && document && document.txHash !== txHash)
    return { code: 'ALREADY_ANCHORED', message: `you have anchored a document with payload hash ${payloadHash} on the vault already` }
  if (circuit === 'revealAnchor' && !state.commitments[anchorCommitment(payloadHash, String(args.metadataHash), String(args.nonce))]?.[attester])
    return { code: 'COMMITMENT_NOT_FOUND', message: 'the vault holds no commitment of yours of this sha256, metadata and nonce' }
  if (circuit === 'commitAnchor' && state.commitments[String(args.commitment)]?.[attester])
    return { code: 'ALREADY_COMMITTED', message: 'you have recorded this commitment on the vault already' }
  if ((circuit === 'grantDisclosure' || circuit === 'revokeDisclosure') && !document)
    return { code: 'DOCUMENT_NOT_ANCHORED', message: `you have no anchor of the document ${payloadHash} on the vault` }
  return { code: 'CHAIN_EXECUTION_FAILED', message: `the vault's ${circuit} circuit failed on chain` }
}
