import type { ZkClaim } from '../../chains/chain-b/port.ts'
import type { ChainBAccess } from '../chain.ts'
import type { JobCommand } from './commands.ts'
import type { Witness } from './witness.ts'

/**
 * A proving job's first step: each claim proved in the prover's threads, from its circuit input
 * (the witness, opened in memory), and verified, then the vault call that records them all.
 * Throws ProofFailure when a proof cannot be made or does not verify (the claims were checked when
 * the job was queued, so this is not the caller's doing).
 */
export class ProofFailure extends Error {
  readonly code = 'PROOF_FAILED'
}

/**
 * A prover's message as the job may keep it: long numbers and hex runs (which could be a value, a
 * salt or a path element of the witness) are left out.
 */
const withoutWitnessValues = (message: string) => message.replace(/\d{12,}|[0-9a-f]{16,}/gi, '…')

export async function proveClaims(chain: ChainBAccess, command: JobCommand, witness: Witness): Promise<JobCommand> {
  const claims = await Promise.all((command.prove ?? []).map(async ({ circuit, payloadHash, payloadHashB }, index): Promise<ZkClaim> => {
    let proven
    try {
      proven = await chain.zk.prove(circuit, witness[index] ?? {})
    } catch (error) {
      throw new ProofFailure(`the ${circuit} claim could not be proved: ${withoutWitnessValues(String((error as Error)?.message ?? error))}`.slice(0, 500))
    }
    if (!(await chain.zk.verify({ circuit, ...proven }))) throw new ProofFailure(`the ${circuit} proof did not verify`)
    return { circuit, proof: proven.proof, publicSignals: proven.publicSignals, payloadHash, ...(payloadHashB ? { payloadHashB } : {}) }
  }))
  return { attestationIds: command.attestationIds, call: { circuit: 'recordAttestations', args: { claims } } }
}
