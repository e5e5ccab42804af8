/** snarkjs and ffjavascript ship no type declarations; the parts the prover and verifier use. */
declare module 'snarkjs' {
  export interface Groth16Proof { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: string; curve: string }
  type FileSource = string | { type: 'mem'; data: Uint8Array }
  export const groth16: {
    fullProve(input: Record<string, unknown>, wasm: FileSource, zkey: FileSource, logger?: unknown, witnessOptions?: unknown, proverOptions?: { singleThread?: boolean }): Promise<{ proof: Groth16Proof; publicSignals: string[] }>
    verify(verificationKey: unknown, publicSignals: string[], proof: Groth16Proof): Promise<boolean>
  }
  /** The trusted-setup ceremony's steps (zk/ceremony.ts); hashes are blake2b-512 bytes. */
  interface Logger { info(text: string): void; warn(text: string): void; error(text: string): void; debug(text: string): void }
  export const zKey: {
    newZKey(r1cs: string, ptau: string, zkey: string, logger?: Logger): Promise<Uint8Array>
    contribute(zkeyOld: string, zkeyNew: string, name: string, entropy: string, logger?: Logger): Promise<Uint8Array>
    beacon(zkeyOld: string, zkeyNew: string, name: string, beaconHex: string, iterationsExp: number, logger?: Logger): Promise<Uint8Array>
    verifyFromR1cs(r1cs: string, ptau: string, zkey: string, logger?: Logger): Promise<boolean>
    exportVerificationKey(zkey: string, logger?: Logger): Promise<Record<string, unknown>>
  }
  export const powersOfTau: {
    newAccumulator(curve: unknown, power: number, ptau: string, logger?: Logger): Promise<unknown>
    beacon(ptauOld: string, ptauNew: string, name: string, beaconHex: string, iterationsExp: number, logger?: Logger): Promise<unknown>
    preparePhase2(ptauOld: string, ptauNew: string, logger?: Logger): Promise<unknown>
  }
  export const curves: { getCurveFromName(name: string): Promise<unknown> }
}

declare module 'ffjavascript' {
  export function buildBn128(singleThread?: boolean): Promise<{ terminate(): Promise<void> }>
}
