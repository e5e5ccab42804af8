import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import type { VaultCall } from './port.ts'

/**
 * The attestation-vault contract: its circuits, its state and how a call is signed. Shared by the
 * devnet (which executes and validates calls) and the chain-B service (which signs and submits
 * them, and reads the state back).
 *
 * Identities are ed25519 keys: an attester's id (and a sponsor's) is the SHA-256 of its 32-byte
 * public key, hex. A call is signed by the attester and by the sponsor over `callDigest`.
 */

/** Disclosure levels, as the contract stores them. */
export const DISCLOSURE_ROLES = ['public_only', 'legitimate_interest', 'authority'] as const
export type DisclosureRole = (typeof DISCLOSURE_ROLES)[number]
export const levelOf = (role: DisclosureRole) => DISCLOSURE_ROLES.indexOf(role)

/**
 * The circuits and their arguments (all hex unless noted). Every record is the calling attester's:
 * anchors and commitments are scoped by attester, so one attester never blocks another's.
 * - attest { payloadHash, metadataHash }: the attester's anchor of a document; once per attester and payload hash.
 * - commitAnchor { commitment }: records a commitment (sha256 of payloadHash ‖ metadataHash ‖ nonce) for its attester.
 * - revealAnchor { payloadHash, metadataHash, nonce }: anchors the document of an earlier commitment of the same attester.
 * - attestAgentOutput { payloadHash, envelope }: records an agent-output envelope (hex of its UTF-8
 *   canonical JSON) whose SHA-256 is the payload hash.
 *   attest and revealAnchor also take a content root with its schema id and field count (all or
 *   none); the anchor records the call's sponsor as the root's voucher (rootVouchedBy).
 * - anchorContentRoot { payloadHash, contentRoot, schemaId, fieldCount }: the root of the attester's own anchor, once.
 * - recordAttestations { claims }: 1 to 8 zero-knowledge claims, each { circuit, proof, publicSignals,
 *   payloadHash, payloadHashB? }; every proof verifies (checked when submitted), every claim's public
 *   signals name the caller as attester and the content roots of the caller's anchors of its
 *   documents, its statement is not vacuous (zk/claim-rules.ts), and no claim is recorded twice;
 *   all are recorded or none.
 * - grantDisclosure { payloadHash, grantee, level (0..2) }: on the attester's own anchor.
 * - revokeDisclosure { payloadHash, grantee }: on the attester's own anchor.
 */
export const VAULT_CIRCUITS = ['attest', 'commitAnchor', 'revealAnchor', 'attestAgentOutput', 'anchorContentRoot', 'grantDisclosure', 'revokeDisclosure', 'recordAttestations'] as const
export type VaultCircuit = (typeof VAULT_CIRCUITS)[number]

/** One attester's anchor of a payload hash. */
export interface VaultDocument {
  metadataHash: string
  attester: string
  /** Height and transaction hash of the anchoring transaction. */
  height: number
  txHash: string
  contentRoot?: string
  schemaId?: string
  /** How many of the root's 16 slots hold proof fields (slots 0 to fieldCount - 1; the rest are padding). */
  fieldCount?: number
  /** The sponsor that submitted the root: whoever computed it from the document vouches for it. */
  rootVouchedBy?: string
  /** grantee's attester id → disclosure level, granted by this anchor's attester. */
  disclosures?: Record<string, number>
  /** Agent-output envelopes: the canonical JSON text. */
  envelope?: string
}

export interface VaultState {
  /**
   * payloadHash → attester → anchor. Anchors are scoped by attester: anyone may anchor any hash
   * under their own attester id, and nobody's anchor blocks another's.
   */
  documents: Record<string, Record<string, VaultDocument>>
  /** commitment → attester → when it was recorded (scoped like anchors). */
  commitments: Record<string, Record<string, { height: number }>>
  /** Zero-knowledge claims whose proofs verified, by claim key (claimKeyOf). */
  attestations: Record<string, VaultAttestation>
}

/** An attester's anchor of a payload hash. */
export const anchorOf = (state: VaultState, payloadHash: string, attester: string): VaultDocument | undefined => state.documents[payloadHash]?.[attester]

/** Every attester's anchor of a payload hash, earliest first. */
export const anchorsOf = (state: VaultState, payloadHash: string): VaultDocument[] =>
  Object.values(state.documents[payloadHash] ?? {}).sort((a, b) => a.height - b.height || (a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : 0))

export interface VaultAttestation {
  /** The circuit (zk/circuits) whose proof verified. */
  circuit: string
  publicSignals: string[]
  payloadHash: string
  /** The second document of a comparison. */
  payloadHashB?: string
  attester: string
  height: number
  txHash: string
}

/** A claim's key: its circuit and public signals (which name its documents, roots and attester). */
export const claimKeyOf = (circuit: string, publicSignals: string[]) => sha256Hex(`${circuit}:${publicSignals.join(',')}`)

export const emptyVaultState = (): VaultState => ({ documents: {}, commitments: {}, attestations: {} })

export const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')

/** The commitment that hides a payload hash until it is revealed. */
export const anchorCommitment = (payloadHash: string, metadataHash: string, nonce: string) =>
  sha256Hex(Buffer.from(payloadHash + metadataHash + nonce, 'hex'))

/** What the attester and the sponsor sign: the contract, the circuit, its arguments in key order, and the nonce. */
export function callDigest(contractAddress: string, call: VaultCall, nonce: string): Buffer {
  const args = Object.keys(call.args).sort().map(key => [key, call.args[key]])
  return createHash('sha256').update(JSON.stringify([contractAddress, call.circuit, args, nonce])).digest()
}

/** An ed25519 key pair from a 32-byte seed. */
export interface VaultKey {
  privateKey: KeyObject
  /** The raw 32-byte public key, hex. */
  publicKey: string
  /** SHA-256 of the raw public key: the attester (or sponsor) id. */
  id: string
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

export function vaultKeyFromSeed(seed: Buffer): VaultKey {
  if (seed.length !== 32) throw new Error('an ed25519 seed has 32 bytes')
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' })
  const publicKey = rawPublicKey(createPublicKey(privateKey))
  return { privateKey, publicKey: publicKey.toString('hex'), id: identityOf(publicKey.toString('hex')) }
}

export const identityOf = (publicKeyHex: string) => sha256Hex(Buffer.from(publicKeyHex, 'hex'))

export const signDigest = (key: VaultKey, digest: Buffer) => sign(null, digest, key.privateKey).toString('hex')

export function verifyDigest(publicKeyHex: string, digest: Buffer, signatureHex: string): boolean {
  try {
    const der = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKeyHex, 'hex')])
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' })
    return verify(null, digest, key, Buffer.from(signatureHex, 'hex'))
  } catch {
    return false
  }
}

function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' }).subarray(-32)
}

/** A 32-byte seed from configuration: 64 hex characters as they are, any other text by its SHA-256. */
export const seedBytes = (text: string) => (/^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : createHash('sha256').update(text).digest())
