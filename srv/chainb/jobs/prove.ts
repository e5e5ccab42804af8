import type { ZkClaim } from '../../chains/chain-b/port.ts'
import type { ChainBAccess } from '../chain.ts'
import type { JobCommand } from './commands.ts'

/**
 * A proving job's first step: each claim proved in the prover's threads and verified, then the
 * vault call that records them all. Throws ProofFailure when a proof cannot be made or does not
 * verify (the claims were checked when the job was queued, so this is not the caller's doing).
 */
export class ProofFailure extends Error {
  readonly code = 'PROOF_FAILED'
}

export async function proveClaims(chain: ChainBAccess, command: JobCommand): Promise<JobCommand> {
  const claims = await Promise.all((command.prove ?? []).map(async ({ circuit, input, payloadHash, payloadHashB }): Promise<ZkClaim> => {
    let proven
    try {
      proven = await chain.zk.prove(circuit, input)
    } catch (error) {
      throw new ProofFailure(`the ${circuit} claim could not be proved: ${(error as Error).message}`.slice(0, 500))
    }
    if (!(await chain.zk.verify({ circuit, ...proven }))) throw new ProofFailure(`the ${circuit} proof did not verify`)
    return { circuit, proof: proven.proof, publicSignals: proven.publicSignals, payloadHash, ...(payloadHashB ? { payloadHashB } : {}) }
  }))
  return { attestationIds: command.attestationIds, call: { circuit: 'recordAttestations', args: { claims } } }
}
