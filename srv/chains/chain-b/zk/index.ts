import { readManifest, type CircuitId, type KeysManifest } from './circuits.ts'
import { ProverPool, type ProvenClaim } from './prover.ts'
import { verifyProof, type ProofClaim } from './verifier.ts'

/**
 * Zero-knowledge proofs of chain B's claims: Groth16 over BN254 with the circuits' keys in one
 * folder (zk/keys in development). Proving runs in a bounded pool of threads; verifying is quick
 * and runs where it is called.
 */
export class ZeroKnowledge {
  readonly keysDir: string
  readonly manifest: KeysManifest
  readonly prover: ProverPool

  constructor(keysDir: string, provers: number) {
    this.keysDir = keysDir
    this.manifest = readManifest(keysDir)
    this.prover = new ProverPool(keysDir, provers)
  }

  prove(circuit: CircuitId, input: Record<string, unknown>): Promise<ProvenClaim> {
    return this.prover.prove(circuit, input)
  }

  verify(claim: ProofClaim): Promise<boolean> {
    return verifyProof(this.keysDir, claim)
  }

  close() {
    return this.prover.close()
  }
}

export { CIRCUIT_IDS } from './circuits.ts'
export type { ProofClaim } from './verifier.ts'
