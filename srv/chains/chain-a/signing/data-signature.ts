import { CborArray, CborBytes, CborMap, CborNegInt, CborSimple, CborTag, CborText, CborUInt, Cbor, type CborObj } from '@harmoniclabs/cbor'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { readCbor } from '../cbor.ts'
import { decodeAddress } from '../csl.ts'

/**
 * Verifies a CIP-30 `signData` answer (a DataSignature: COSE_Sign1 and COSE_Key, CIP-8) for an
 * address and the exact payload the server asked to be signed. Written on `@harmoniclabs/cbor` and
 * CSL, independently of the development signer (cardano-message-signing), so that each checks the
 * other. Every check of CIP-30 is made, and one the known verifiers leave out: the protected
 * `address` header must be the claimed address, byte for byte (and so its network too). Hostile
 * input answers a problem, never an exception.
 */

export type DataSignatureProblem =
  | 'MALFORMED_SIGNATURE'
  | 'MALFORMED_KEY'
  | 'DETACHED_PAYLOAD'
  | 'UNSUPPORTED_ALGORITHM'
  | 'ADDRESS_HEADER_MISSING'
  | 'ADDRESS_MISMATCH'
  | 'HASHED_PAYLOAD'
  | 'UNSUPPORTED_KEY'
  | 'UNSUPPORTED_ADDRESS'
  | 'SCRIPT_ADDRESS'
  | 'KEY_NOT_OF_ADDRESS'
  | 'PAYLOAD_MISMATCH'
  | 'SIGNATURE_MISMATCH'

export type DataSignatureCheck =
  | { valid: true; signerKeyHash: string; credential: 'payment' | 'stake' }
  | { valid: false; code: DataSignatureProblem; message: string }

interface DataSignatureInput {
  /** The claimed address: bech32 (`addr…`, `stake…`). */
  address: string
  /** COSE_Sign1 CBOR hex, as `signData` answers it in `signature`. */
  signature: unknown
  /** COSE_Key CBOR hex, as `signData` answers it in `key`. */
  key: unknown
  /** The exact bytes the signer was asked to sign. */
  payload: Uint8Array
}

/** A COSE_Sign1 of a sign-in message is a few hundred bytes; a COSE_Key fewer than a hundred. */
const MAX_SIGNATURE_BYTES = 16 * 1024
const MAX_KEY_BYTES = 1024

const COSE_SIGN1_TAG = 18n
const ALG = 1
const EDDSA = -8
const ADDRESS_LABEL = 'address'
const HASHED_LABEL = 'hashed'
const KTY = 1
const KEY_ALG = 3
const OKP = 1
const CRV = -1
const ED25519 = 6
const X = -2

type Checked<T> = { ok: true; value: T } | { ok: false; code: DataSignatureProblem; message: string }

const fail = <T>(code: DataSignatureProblem, message: string): Checked<T> => ({ ok: false, code, message })
const pass = <T>(value: T): Checked<T> => ({ ok: true, value })

interface CoseSign1 {
  protectedBytes: Uint8Array
  protectedHeader: HeaderMap
  unprotectedHeader: HeaderMap
  payload: Uint8Array
  signature: Uint8Array
}

/** A COSE header map by label (integer or text), duplicates refused. */
type HeaderMap = Map<number | string, CborObj>

export function verifyDataSignature(input: DataSignatureInput): DataSignatureCheck {
  const address = decodeAddress(input.address)
  if (!address) return refused('UNSUPPORTED_ADDRESS', 'The claimed address is not a bech32 address')

  const sign1 = parseSign1(input.signature)
  if (!sign1.ok) return refused(sign1.code, sign1.message)
  const { protectedHeader, unprotectedHeader } = sign1.value

  const alg = protectedHeader.get(ALG)
  if (integerOf(alg) !== EDDSA) return refused('UNSUPPORTED_ALGORITHM', 'The protected header must name the algorithm EdDSA (alg 1 = -8)')
  const addressHeader = protectedHeader.get(ADDRESS_LABEL)
  if (!(addressHeader instanceof CborBytes)) return refused('ADDRESS_HEADER_MISSING', 'The protected header has no "address" (the signing address\'s bytes)')
  if (!sameBytes(addressHeader.bytes, address.to_bytes())) return refused('ADDRESS_MISMATCH', 'The protected "address" header is another address (or another network) than the claimed one')
  if (isHashed(unprotectedHeader) || isHashed(protectedHeader)) return refused('HASHED_PAYLOAD', 'The payload is hashed ("hashed": true); sign the message itself')

  const publicKey = parseCoseKey(input.key)
  if (!publicKey.ok) return refused(publicKey.code, publicKey.message)
  const credential = signingCredential(address)
  if (!credential.ok) return refused(credential.code, credential.message)
  const keyHash = publicKey.value.hash().to_hex()
  if (keyHash !== credential.value.hash) {
    return refused('KEY_NOT_OF_ADDRESS', `The key does not hash to the address's ${credential.value.kind} key credential`)
  }

  if (!sameBytes(sign1.value.payload, input.payload)) return refused('PAYLOAD_MISMATCH', 'The signed payload is not the message that was asked to be signed')
  if (!signatureHolds(publicKey.value, sign1.value)) return refused('SIGNATURE_MISMATCH', 'The Ed25519 signature does not verify for this key and message')
  return { valid: true, signerKeyHash: keyHash, credential: credential.value.kind }
}

const refused = (code: DataSignatureProblem, message: string): DataSignatureCheck => ({ valid: false, code, message })

// ---- COSE_Sign1 ----------------------------------------------------------------------------

/** `[protected: bstr .cbor header_map, unprotected: header_map, payload: bstr / nil, signature: bstr]`, tag 18 optional. */
function parseSign1(hex: unknown): Checked<CoseSign1> {
  const bytes = hexInput(hex, MAX_SIGNATURE_BYTES, 'MALFORMED_SIGNATURE', 'signature')
  if (!bytes.ok) return bytes
  const item = cborOf(bytes.value)
  const shape = 'The signature must be a COSE_Sign1: [protected, unprotected, payload, signature]'
  if (!item) return fail('MALFORMED_SIGNATURE', 'The signature is not well-formed CBOR')
  if (item instanceof CborTag && item.tag !== COSE_SIGN1_TAG) return fail('MALFORMED_SIGNATURE', `The signature carries CBOR tag ${item.tag}, not 18 (COSE_Sign1)`)
  const array = item instanceof CborTag ? item.data : item
  if (!(array instanceof CborArray) || array.array.length !== 4) return fail('MALFORMED_SIGNATURE', shape)
  const [protectedItem, unprotectedItem, payload, signature] = array.array
  if (!(protectedItem instanceof CborBytes) || !(signature instanceof CborBytes)) return fail('MALFORMED_SIGNATURE', shape)
  if (payload instanceof CborSimple && payload.simple === null) return fail('DETACHED_PAYLOAD', 'The payload is detached (nil); it must be in the COSE_Sign1')
  if (!(payload instanceof CborBytes)) return fail('MALFORMED_SIGNATURE', 'The payload must be a byte string')

  const protectedHeader = cborOf(protectedItem.bytes)
  const protectedMap = protectedHeader instanceof CborMap ? headerMap(protectedHeader) : undefined
  if (!protectedMap) return fail('MALFORMED_SIGNATURE', 'The protected header must be a CBOR map with distinct labels')
  const unprotectedMap = unprotectedItem instanceof CborMap ? headerMap(unprotectedItem) : undefined
  if (!unprotectedMap) return fail('MALFORMED_SIGNATURE', 'The unprotected header must be a map with distinct labels')
  return pass({ protectedBytes: protectedItem.bytes, protectedHeader: protectedMap, unprotectedHeader: unprotectedMap, payload: payload.bytes, signature: signature.bytes })
}

/** `hashed` absent or false: the payload is the message itself. Anything else is refused. */
function isHashed(header: HeaderMap): boolean {
  const hashed = header.get(HASHED_LABEL)
  return hashed !== undefined && !(hashed instanceof CborSimple && hashed.simple === false)
}

/**
 * Ed25519 over the Sig_structure `["Signature1", protected bytes as sent, h'' (no external aad),
 * payload]`. The signature must be 64 bytes; CSL refuses other lengths by throwing.
 */
function signatureHolds(publicKey: CSL.PublicKey, sign1: CoseSign1): boolean {
  if (sign1.signature.length !== 64) return false
  const sigStructure = Cbor.encode(new CborArray([
    new CborText('Signature1'), new CborBytes(sign1.protectedBytes), new CborBytes(new Uint8Array(0)), new CborBytes(sign1.payload),
  ])).toBuffer()
  try {
    return publicKey.verify(sigStructure, CSL.Ed25519Signature.from_bytes(sign1.signature))
  } catch {
    return false
  }
}

// ---- COSE_Key ------------------------------------------------------------------------------

/** `{1: 1 (OKP), 3: -8 (EdDSA, optional), -1: 6 (Ed25519), -2: x (32 bytes)}`. */
function parseCoseKey(hex: unknown): Checked<CSL.PublicKey> {
  const bytes = hexInput(hex, MAX_KEY_BYTES, 'MALFORMED_KEY', 'key')
  if (!bytes.ok) return bytes
  const item = cborOf(bytes.value)
  const key = item instanceof CborMap ? headerMap(item) : undefined
  if (!key) return fail('MALFORMED_KEY', 'The key must be a COSE_Key: a CBOR map with distinct labels')
  if (integerOf(key.get(KTY)) !== OKP) return fail('UNSUPPORTED_KEY', 'The key type must be OKP (kty 1 = 1)')
  if (integerOf(key.get(CRV)) !== ED25519) return fail('UNSUPPORTED_KEY', 'The curve must be Ed25519 (crv -1 = 6)')
  if (key.has(KEY_ALG) && integerOf(key.get(KEY_ALG)) !== EDDSA) return fail('UNSUPPORTED_KEY', 'The key\'s algorithm must be EdDSA (alg 3 = -8)')
  const x = key.get(X)
  if (!(x instanceof CborBytes) || x.bytes.length !== 32) return fail('UNSUPPORTED_KEY', 'The public key (x, label -2) must be 32 bytes')
  try {
    return pass(CSL.PublicKey.from_bytes(x.bytes))
  } catch {
    return fail('UNSUPPORTED_KEY', 'The public key (x, label -2) is not an Ed25519 key')
  }
}

// ---- the address's credential --------------------------------------------------------------

/**
 * The key credential that signs for the address: the payment key of a base or enterprise address,
 * the stake key of a reward address. Scripts cannot sign data; other addresses are not supported.
 */
function signingCredential(address: CSL.Address): Checked<{ kind: 'payment' | 'stake'; hash: string }> {
  const kind = address.kind()
  const credential = kind === CSL.AddressKind.Base || kind === CSL.AddressKind.Enterprise
    ? { kind: 'payment' as const, credential: address.payment_cred() }
    : kind === CSL.AddressKind.Reward
      ? { kind: 'stake' as const, credential: CSL.RewardAddress.from_address(address)?.payment_cred() }
      : undefined
  if (!credential?.credential) return fail('UNSUPPORTED_ADDRESS', 'Only base, enterprise and reward (stake) addresses can sign in')
  const keyHash = credential.credential.to_keyhash()
  if (!keyHash) return fail('SCRIPT_ADDRESS', `The address's ${credential.kind} credential is a script, which cannot sign data`)
  return pass({ kind: credential.kind, hash: keyHash.to_hex() })
}

// ---- CBOR helpers --------------------------------------------------------------------------

function hexInput(hex: unknown, maxBytes: number, code: DataSignatureProblem, name: string): Checked<Uint8Array> {
  if (typeof hex !== 'string') return fail(code, `The ${name} must be CBOR in hex`)
  if (hex.length > 2 * maxBytes) return fail(code, `The ${name} exceeds ${maxBytes} bytes`)
  if (!hex.length || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) return fail(code, `The ${name} must be CBOR in hex`)
  return pass(Buffer.from(hex, 'hex'))
}

/** Exactly one well-formed CBOR item, or undefined. */
function cborOf(bytes: Uint8Array): CborObj | undefined {
  try {
    return readCbor(bytes)
  } catch {
    return undefined
  }
}

/** A map's entries by integer or text label; undefined when a label is of another type or repeats. */
function headerMap(map: CborMap): HeaderMap | undefined {
  const labels: HeaderMap = new Map()
  for (const { k, v } of map.map) {
    const label = k instanceof CborText ? k.text : integerOf(k)
    if (label === undefined || labels.has(label)) return undefined
    labels.set(label, v)
  }
  return labels
}

/** A CBOR integer small enough for a COSE label or value, as a number. */
function integerOf(item: CborObj | undefined): number | undefined {
  if (!(item instanceof CborUInt) && !(item instanceof CborNegInt)) return undefined
  const value = item.num
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0
