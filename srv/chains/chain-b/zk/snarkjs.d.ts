/** snarkjs and ffjavascript ship no type declarations; the parts the prover and verifier use. */
declare module 'snarkjs' {
  export interface Groth16Proof { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: string; curve: string }
  type FileSource = string | { type: 'mem'; data: Uint8Array }
  export const groth16: {
    fullProve(input: Record<string, unknown>, wasm: FileSource, zkey: FileSource, logger?: unknown, witnessOptions?: unknown, proverOptions?: { singleThread?: boolean }): Promise<{ proof: Groth16Proof; publicSignals: string[] }>
    verify(verificationKey: unknown, publicSignals: string[], proof: Groth16Proof): Promise<boolean>
  }
}

declare module 'ffjavascript' {
  export function buildBn128(singleThread?: boolean): Promise<{ terminate(): Promise<void> }>
}
