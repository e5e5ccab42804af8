import type { VaultCall } from '../../chains/chain-b/port.ts'
import type { CircuitId } from '../../chains/chain-b/zk/circuits.ts'

/**
 * What a job carries in its `request` column: the vault call it submits, and the record it makes
 * or changes (so the runner can mark it when the call is confirmed or fails, and a replay of the
 * request can answer the same ids). A proving job carries its claims instead of a call until it
 * has proved them: then the call (with the proofs) replaces them. The claims' circuit inputs (the
 * witness) are never part of the stored command: queue.ts seals them apart (witness.ts).
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
  /** The circuit's input, witness included: in memory only (at enqueue, and opened to prove), never in the `request` column. */
  input?: Record<string, unknown>
  payloadHash: string
  payloadHashB?: string
}

/** The command as stored, and its claims' inputs apart (undefined for a job that proves nothing). */
export function withoutWitness(command: JobCommand): { stored: JobCommand; witness?: Record<string, unknown>[] } {
  if (!command.prove?.length) return { stored: command }
  const prove = command.prove.map(({ input: _input, ...claim }) => claim)
  return { stored: { ...command, prove }, witness: command.prove.map(claim => claim.input ?? {}) }
}

export const commandOf = (request: string | null | undefined): JobCommand => JSON.parse(request ?? '{}') as JobCommand
