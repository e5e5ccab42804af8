import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import * as MS from '@emurgo/cardano-message-signing-nodejs'

/**
 * CIP-30 DataSignatures the way a careless or hostile wallet might make them, for tests of the
 * verifier: any key for any address bytes, another algorithm, no address header, a hashed or
 * detached payload, an odd COSE_Key. Built with cardano-message-signing, like the dev signer; the
 * gateway verifies with its own implementation.
 */

export interface ForgedSignData {
  /** The raw bytes of the protected `address` header; none when absent. */
  addressBytes?: Uint8Array
  payload: Uint8Array
  signer: CSL.PrivateKey
  /** The protected `alg`; -8 (EdDSA) by default, none when null. */
  alg?: number | null
  /** Sign the payload's blake2b-224 digest (`hashed: true`), as CIP-8 allows and the gateway refuses. */
  hashed?: boolean
  /** Leave the payload out of the COSE_Sign1 (nil): a detached payload. */
  detached?: boolean
  /** Another public key (x) in the COSE_Key than the signer's. */
  keyOf?: CSL.PrivateKey
}

export function forgeSignData(forged: ForgedSignData): { signature: string; key: string } {
  const protectedHeaders = MS.HeaderMap.new()
  if (forged.alg !== null) protectedHeaders.set_algorithm_id(MS.Label.new_int(intOf(forged.alg ?? -8)))
  if (forged.addressBytes) protectedHeaders.set_header(MS.Label.new_text('address'), MS.CBORValue.new_bytes(forged.addressBytes))
  // The builder writes the unprotected `hashed` header itself.
  const headers = MS.Headers.new(MS.ProtectedHeaderMap.new(protectedHeaders), MS.HeaderMap.new())
  const builder = MS.COSESign1Builder.new(headers, forged.payload, forged.detached ?? false)
  if (forged.hashed) builder.hash_payload()
  const signature = forged.signer.sign(builder.make_data_to_sign().to_bytes()).to_bytes()
  return { signature: hex(builder.build(signature).to_bytes()), key: coseKey({ x: (forged.keyOf ?? forged.signer).to_public().as_bytes() }) }
}

/** A COSE_Key with these fields (defaults: OKP, EdDSA, Ed25519); null leaves a field out. */
export function coseKey(fields: { x: Uint8Array | null; kty?: number; alg?: number | null; crv?: number | null }): string {
  const key = MS.COSEKey.new(MS.Label.new_int(intOf(fields.kty ?? 1)))
  if (fields.alg !== null) key.set_algorithm_id(MS.Label.new_int(intOf(fields.alg ?? -8)))
  if (fields.crv !== null) key.set_header(MS.Label.new_int(intOf(-1)), MS.CBORValue.new_int(intOf(fields.crv ?? 6)))
  if (fields.x) key.set_header(MS.Label.new_int(intOf(-2)), MS.CBORValue.new_bytes(fields.x))
  return hex(key.to_bytes())
}

const intOf = (n: number) => MS.Int.new_i32(n)
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
