import { readProofClaim, type ProofClaim } from '../chains/chain-b/zk/verifier.ts'
import { badInput } from '../lib/errors.ts'
import { jsonValue } from './values.ts'

/** The parameter that carries each part of a proof the caller made. */
const PARAMETERS = { circuit: 'circuitId', proof: 'proofJson', publicSignals: 'publicSignalsJson' } as const

/** A proof as snarkjs writes it (circuitId, proofJson, publicSignalsJson), for a known circuit; else a 400 naming the parameter. */
export function proofClaimParam(circuit: unknown, proof: unknown, publicSignals: unknown): ProofClaim {
  const read = readProofClaim(circuit, jsonValue(proof, PARAMETERS.proof), jsonValue(publicSignals, PARAMETERS.publicSignals))
  if ('claim' in read) return read.claim
  const target = PARAMETERS[read.problem.part]
  throw badInput(read.problem.code, `${target} must be ${read.problem.expected}`, target)
}
