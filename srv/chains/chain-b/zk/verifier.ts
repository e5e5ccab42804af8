import { buildBn128 } from 'ffjavascript'
import * as snarkjs from 'snarkjs'
import type { Groth16Proof } from 'snarkjs'
import { CIRCUITS, isCircuitId, verificationKey, type CircuitId } from './circuits.ts'
import { parseField } from './field.ts'

/**
 * Groth16 verification on this thread (a few milliseconds of pairing), on one single-threaded
 * curve: snarkjs finds it where it would otherwise build a curve with a thread pool of its own.
 */

let curve: Promise<unknown> | undefined
const singleThreadedCurve = () => (curve ??= buildBn128(true).then(built => Object.assign(globalThis, { curve_bn128: built })))

export interface ProofClaim { circuit: CircuitId; proof: Groth16Proof; publicSignals: string[] }

/** A curve point as snarkjs writes it: `length` decimal coordinates. */
const POINT = (value: unknown, length: number) => Array.isArray(value) && value.length === length && value.every(part => typeof part === 'string' && /^[0-9]{1,78}$/.test(part))

/** Why a claim is no proof of a known circuit: which part, and what it must be. */
export interface ClaimShapeProblem {
  code: 'UNKNOWN_CIRCUIT' | 'INVALID_PROOF_FORMAT' | 'INVALID_PUBLIC_SIGNALS'
  part: 'circuit' | 'proof' | 'publicSignals'
  /** What the part must be, to follow "<part> must be". */
  expected: string
}

/** A proof as snarkjs writes it, for a known circuit, with that circuit's number of public signals; else the problem. */
export function readProofClaim(circuit: unknown, proof: unknown, publicSignals: unknown): { claim: ProofClaim } | { problem: ClaimShapeProblem } {
  if (!isCircuitId(circuit)) return { problem: { code: 'UNKNOWN_CIRCUIT', part: 'circuit', expected: `one of ${Object.keys(CIRCUITS).join(', ')}` } }
  const p = proof as Partial<Groth16Proof> | null
  if (!p || typeof p !== 'object' || !POINT(p.pi_a, 3) || !POINT(p.pi_c, 3) || !Array.isArray(p.pi_b) || p.pi_b.length !== 3 || !p.pi_b.every(pair => POINT(pair, 2)))
    return { problem: { code: 'INVALID_PROOF_FORMAT', part: 'proof', expected: 'a Groth16 proof as snarkjs writes it ({ pi_a, pi_b, pi_c, protocol, curve })' } }
  if ((p.protocol ?? 'groth16') !== 'groth16' || (p.curve ?? 'bn128') !== 'bn128') return { problem: { code: 'INVALID_PROOF_FORMAT', part: 'proof', expected: 'a groth16 proof over bn128' } }
  const names = CIRCUITS[circuit].publicSignals
  if (!Array.isArray(publicSignals) || publicSignals.length !== names.length || !publicSignals.every(signal => typeof signal === 'string' && /^[0-9]{1,78}$/.test(signal) && parseField(signal) !== undefined))
    return { problem: { code: 'INVALID_PUBLIC_SIGNALS', part: 'publicSignals', expected: `${names.length} decimal field elements for ${circuit}: ${names.join(', ')}` } }
  const { pi_a, pi_b, pi_c } = p as Groth16Proof
  return { claim: { circuit, proof: { pi_a, pi_b, pi_c, protocol: 'groth16', curve: 'bn128' }, publicSignals: publicSignals as string[] } }
}

/** Whether the proof verifies for its public signals under the circuit's verification key. */
export async function verifyProof(keysDir: string, claim: ProofClaim): Promise<boolean> {
  await singleThreadedCurve()
  try {
    return await snarkjs.groth16.verify(verificationKey(keysDir, claim.circuit), claim.publicSignals, claim.proof)
  } catch {
    return false
  }
}

/** The public signals of a claim (of a known circuit, checked by readProofClaim) by name. */
export function signalsByName(claim: { circuit: string; publicSignals: string[] }): Record<string, bigint> {
  return Object.fromEntries(CIRCUITS[claim.circuit as CircuitId].publicSignals.map((name, index) => [name, BigInt(claim.publicSignals[index])]))
}
