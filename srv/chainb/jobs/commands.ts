import type { VaultCall } from '../../chains/chain-b/port.ts'
import type { JobKindName } from './kinds.ts'

/**
 * What a job carries in its `request` column: the vault call it submits, and the record it makes
 * or changes (so the runner can mark it when the call is confirmed or fails, and a replay of the
 * request can answer the same ids).
 */
export interface JobCommand {
  call: VaultCall
  documentId?: string
  disclosureGrantId?: string
  /** attestAgentOutput: what the accept answer repeats. */
  payloadHash?: string
  envelopeJson?: string
}

export const commandOf = (request: string | null | undefined): JobCommand => JSON.parse(request ?? '{}') as JobCommand

/** The vault circuit each job kind calls. */
export const CIRCUIT_OF: Record<Exclude<JobKindName, 'proveAttestation'>, string> = {
  anchorDocument: 'attest',
  revealAnchor: 'revealAnchor',
  commitDocumentAnchor: 'commitAnchor',
  attestAgentOutput: 'attestAgentOutput',
  grantDisclosure: 'grantDisclosure',
  revokeDisclosure: 'revokeDisclosure',
}
