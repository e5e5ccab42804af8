import type { VaultCall } from '../../chains/chain-b/port.ts'
import type { CircuitId } from '../../chains/chain-b/zk/circuits.ts'

/**
 * What a job carries in its `request` column: the vault call it submits, and the record it makes
 * or changes (so the runner can mark it when the call is confirmed or fails, and a replay of the
 * request can answer the same ids). A proving job carries its claims' circuit inputs instead of a
 * call until it has proved them: then the call (with the proofs) replaces them, and the witness is gone.
 */
export interface JobCommand {
  call?: VaultCall
  documentId?: string
  disclosureGrantId?: string
  /** attestAgentOutput: what the accept answer repeats. */
  payloadHash?: string
  envelopeJson?: string
  /** The attestations the job records, in the order of its claims. */
  attestationIds?: string[]
  /** Claims to prove before the call can be made. */
  prove?: ClaimToProve[]
}

export interface ClaimToProve {
  circuit: CircuitId
  /** The circuit's input, witness included. */
  input: Record<string, unknown>
  payloadHash: string
  payloadHashB?: string
}

export const commandOf = (request: string | null | undefined): JobCommand => JSON.parse(request ?? '{}') as JobCommand
