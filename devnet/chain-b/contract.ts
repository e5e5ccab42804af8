import type { SponsoredCall, VaultCall, ZkClaim } from '../../srv/chains/chain-b/port.ts'
import { anchorCommitment, anchorOf, callDigest, claimKeyOf, identityOf, sha256Hex, VAULT_CIRCUITS, verifyDigest, type VaultCircuit, type VaultDocument, type VaultState } from '../../srv/chains/chain-b/vault.ts'
import { bindingFailure } from '../../srv/chains/chain-b/zk/bindings.ts'
import { FIELD_PRIME } from '../../srv/chains/chain-b/zk/field.ts'
import { readProofClaim, verifyProof } from '../../srv/chains/chain-b/zk/verifier.ts'
import { LedgerRejection } from './types.ts'

/**
 * The attestation-vault contract as the devnet executes it: a call's shape and signatures are
 * checked when it is submitted (a malformed or unsigned call never enters the mempool); its rules
 * against the state are checked when it is executed in a block (a call that breaks one is included
 * as a FAILURE and its fee is paid).
 */

type ArgKind = 'hash' | 'hex' | 'level' | 'field' | 'claims' | 'fieldCount'
/** Arguments that may be left out: a content root with its schema id and field count, all or none. */
const OPTIONAL = new Set(['contentRoot', 'schemaId', 'fieldCount'])
const MAX_CLAIMS_PER_CALL = 8
const HASH = /^[0-9a-f]{64}$/
const HEX = /^(?:[0-9a-f]{2})+$/
const MAX_ENVELOPE_HEX = 2 * 16 * 1024
const MAX_HEX = 256

const SIGNATURES: Record<VaultCircuit, Record<string, ArgKind>> = {
  attest: { payloadHash: 'hash', metadataHash: 'hash', contentRoot: 'field', schemaId: 'hash', fieldCount: 'fieldCount' },
  commitAnchor: { commitment: 'hash' },
  revealAnchor: { payloadHash: 'hash', metadataHash: 'hash', nonce: 'hex', contentRoot: 'field', schemaId: 'hash', fieldCount: 'fieldCount' },
  attestAgentOutput: { payloadHash: 'hash', envelope: 'hex' },
  anchorContentRoot: { payloadHash: 'hash', contentRoot: 'field', schemaId: 'hash', fieldCount: 'fieldCount' },
  grantDisclosure: { payloadHash: 'hash', grantee: 'hash', level: 'level' },
  revokeDisclosure: { payloadHash: 'hash', grantee: 'hash' },
  recordAttestations: { claims: 'claims' },
}

const invalid = (message: string) => new LedgerRejection(400, 'INVALID_ARGUMENTS', message)

/** The call's circuit and arguments: every argument present, of its kind, nothing else. */
export function checkCallShape(call: VaultCall): void {
  if (!call || typeof call.circuit !== 'string') throw new LedgerRejection(400, 'MALFORMED_CALL', 'A vault call needs a circuit and its args')
  if (!(VAULT_CIRCUITS as readonly string[]).includes(call.circuit)) throw new LedgerRejection(400, 'UNKNOWN_CIRCUIT', `The vault has no circuit '${call.circuit}' (it has ${VAULT_CIRCUITS.join(', ')})`)
  const signature = SIGNATURES[call.circuit as VaultCircuit]
  const args = call.args ?? {}
  if (typeof args !== 'object' || Array.isArray(args)) throw invalid(`The args of ${call.circuit} must be an object`)
  for (const name of Object.keys(args)) if (!(name in signature)) throw invalid(`${call.circuit} takes no argument '${name}'`)
  for (const [name, kind] of Object.entries(signature)) {
    if (OPTIONAL.has(name) && circuitIsOptional(call.circuit) && args[name] === undefined) continue
    checkArgument(call.circuit, name, kind, args[name])
  }
  if (circuitIsOptional(call.circuit) && new Set([...OPTIONAL].map(name => args[name] === undefined)).size > 1)
    throw invalid(`${call.circuit} takes a contentRoot with its schemaId and fieldCount, all three or none`)
}

const circuitIsOptional = (circuit: string) => circuit === 'attest' || circuit === 'revealAnchor'

function checkArgument(circuit: string, name: string, kind: ArgKind, value: unknown) {
  if (value === undefined || value === null) throw invalid(`${circuit} needs the argument '${name}'`)
  if (kind === 'claims') return checkClaims(value)
  if (kind === 'fieldCount') {
    if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 16) throw invalid(`${circuit}: '${name}' must be a whole number from 1 to 16`)
    return
  }
  if (kind === 'level') {
    if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 2) throw invalid(`${circuit}: '${name}' must be a disclosure level 0, 1 or 2`)
    return
  }
  if (typeof value !== 'string') throw invalid(`${circuit}: '${name}' must be lowercase hex`)
  if ((kind === 'hash' || kind === 'field') && !HASH.test(value)) throw invalid(`${circuit}: '${name}' must be 32 bytes of lowercase hex`)
  if (kind === 'field' && BigInt('0x' + value) >= FIELD_PRIME) throw invalid(`${circuit}: '${name}' must be an element of the BN254 scalar field`)
  if (kind === 'hex' && (!HEX.test(value) || value.length > (name === 'envelope' ? MAX_ENVELOPE_HEX : MAX_HEX))) throw invalid(`${circuit}: '${name}' must be lowercase hex of at most ${name === 'envelope' ? MAX_ENVELOPE_HEX / 2 : MAX_HEX / 2} bytes`)
}

function checkClaims(value: unknown) {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_CLAIMS_PER_CALL) throw invalid(`recordAttestations takes 1 to ${MAX_CLAIMS_PER_CALL} claims`)
  for (const claim of value as ZkClaim[]) {
    if (!claim || typeof claim !== 'object') throw invalid('every claim is { circuit, proof, publicSignals, payloadHash, payloadHashB? }')
    const read = readProofClaim(claim.circuit, claim.proof, claim.publicSignals)
    if ('problem' in read) throw invalid(`recordAttestations: a claim's ${read.problem.part} must be ${read.problem.expected}`)
    if (!HASH.test(claim.payloadHash ?? '')) throw invalid("recordAttestations: a claim's payloadHash must be 32 bytes of lowercase hex")
    const comparison = claim.circuit === 'document_compare'
    if (comparison ? !HASH.test(claim.payloadHashB ?? '') : claim.payloadHashB !== undefined) throw invalid('recordAttestations: payloadHashB belongs to (and is needed by) document_compare claims')
  }
}

/**
 * The proofs of a recordAttestations call verify under the circuits' verification keys (in
 * keysDir); a call whose proof does not is refused at submission and never enters the mempool.
 */
export async function checkCallProofs(call: VaultCall, keysDir: string): Promise<void> {
  if (call?.circuit !== 'recordAttestations' || !Array.isArray(call.args?.claims)) return
  for (const [index, claim] of (call.args.claims as ZkClaim[]).entries()) {
    const read = readProofClaim(claim.circuit, claim.proof, claim.publicSignals)
    if ('problem' in read || !(await verifyProof(keysDir, read.claim)))
      throw new LedgerRejection(400, 'INVALID_PROOF', `The proof of claim ${index} (${claim.circuit}) does not verify for its public signals`)
  }
}

const KEY = /^[0-9a-f]{64}$/
const SIGNATURE = /^[0-9a-f]{128}$/

/** Both signatures over the call's digest: the attester's and the sponsor's. */
export function checkCallSignatures(sponsored: SponsoredCall): void {
  if (!KEY.test(sponsored.attesterKey ?? '') || !SIGNATURE.test(sponsored.signature ?? '')) throw new LedgerRejection(400, 'INVALID_SIGNATURE', 'attesterKey must be a 32-byte ed25519 public key and signature 64 bytes, both lowercase hex')
  if (!KEY.test(sponsored.sponsorKey ?? '') || !SIGNATURE.test(sponsored.sponsorSignature ?? '')) throw new LedgerRejection(400, 'INVALID_SPONSOR_SIGNATURE', 'sponsorKey must be a 32-byte ed25519 public key and sponsorSignature 64 bytes, both lowercase hex')
  const digest = callDigest(sponsored.contractAddress, sponsored.call, sponsored.nonce)
  if (!verifyDigest(sponsored.attesterKey, digest, sponsored.signature)) throw new LedgerRejection(400, 'INVALID_SIGNATURE', "The attester's signature does not verify over the call")
  if (!verifyDigest(sponsored.sponsorKey, digest, sponsored.sponsorSignature)) throw new LedgerRejection(400, 'INVALID_SPONSOR_SIGNATURE', "The sponsor's signature does not verify over the call")
}

/** A rule of the contract the call broke: the transaction is included with its fallible segment failed. */
export class ExecutionFailure extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}

interface ExecutionContext {
  height: number
  txHash: string
}

/** Who signed a call: its attester and its sponsor (ed25519 public keys, hex). */
interface CallSigners {
  attesterKey: string
  sponsorKey: string
}

/**
 * Executes a call against the state: answers the new state, or throws ExecutionFailure (the state
 * given is never changed). Every record is the attester's own: anchors, commitments and grants are
 * keyed by attester, so no attester can take a payload hash or a commitment from another.
 */
export function executeCall(state: VaultState, call: VaultCall, signers: CallSigners, context: ExecutionContext): VaultState {
  const attester = identityOf(signers.attesterKey)
  const args = call.args as Record<string, string> & { level?: number; fieldCount?: number }
  const next: VaultState = { ...state, documents: { ...state.documents }, commitments: { ...state.commitments }, attestations: { ...state.attestations } }
  const anchored = { attester, height: context.height, txHash: context.txHash }
  const setAnchor = (payloadHash: string, anchor: VaultDocument) => {
    next.documents[payloadHash] = { ...state.documents[payloadHash], [attester]: anchor }
  }
  const insertDocument = (payloadHash: string, document: VaultDocument) => {
    if (anchorOf(state, payloadHash, attester)) throw new ExecutionFailure('ALREADY_ANCHORED', `The attester has anchored ${payloadHash} already`)
    setAnchor(payloadHash, document)
  }
  const ownDocument = (payloadHash: string) => {
    const document = anchorOf(state, payloadHash, attester)
    if (!document) throw new ExecutionFailure('UNKNOWN_DOCUMENT', `The attester has no anchor of ${payloadHash} in the vault`)
    return document
  }
  const contentRoot = args.contentRoot
    ? { contentRoot: args.contentRoot, schemaId: args.schemaId, fieldCount: args.fieldCount, rootVouchedBy: identityOf(signers.sponsorKey) }
    : {}
  switch (call.circuit as VaultCircuit) {
    case 'attest':
      insertDocument(args.payloadHash, { metadataHash: args.metadataHash, ...anchored, ...contentRoot })
      break
    case 'commitAnchor':
      if (state.commitments[args.commitment]?.[attester]) throw new ExecutionFailure('ALREADY_COMMITTED', `The attester has recorded the commitment ${args.commitment} already`)
      next.commitments[args.commitment] = { ...state.commitments[args.commitment], [attester]: { height: context.height } }
      break
    case 'revealAnchor': {
      if (!state.commitments[anchorCommitment(args.payloadHash, args.metadataHash, args.nonce)]?.[attester])
        throw new ExecutionFailure('UNKNOWN_COMMITMENT', 'The attester has recorded no commitment that matches the revealed document')
      insertDocument(args.payloadHash, { metadataHash: args.metadataHash, ...anchored, ...contentRoot })
      break
    }
    case 'attestAgentOutput': {
      const envelope = Buffer.from(args.envelope, 'hex')
      if (sha256Hex(envelope) !== args.payloadHash) throw new ExecutionFailure('PAYLOAD_MISMATCH', 'The payload hash is not the SHA-256 of the envelope')
      insertDocument(args.payloadHash, { metadataHash: args.payloadHash, ...anchored, envelope: envelope.toString('utf8') })
      break
    }
    case 'anchorContentRoot': {
      const document = ownDocument(args.payloadHash)
      if (document.contentRoot) throw new ExecutionFailure('ALREADY_ANCHORED', `The content root of the attester's anchor of ${args.payloadHash} is recorded already`)
      setAnchor(args.payloadHash, { ...document, ...contentRoot })
      break
    }
    case 'grantDisclosure': {
      const document = ownDocument(args.payloadHash)
      setAnchor(args.payloadHash, { ...document, disclosures: { ...document.disclosures, [args.grantee]: args.level! } })
      break
    }
    case 'revokeDisclosure': {
      const document = ownDocument(args.payloadHash)
      const grants = document.disclosures ?? {}
      if (!(args.grantee in grants)) throw new ExecutionFailure('UNKNOWN_GRANT', `No disclosure of ${args.payloadHash} to ${args.grantee}`)
      const { [args.grantee]: _revoked, ...rest } = grants
      setAnchor(args.payloadHash, { ...document, disclosures: rest })
      break
    }
    case 'recordAttestations':
      for (const claim of call.args.claims as ZkClaim[]) recordClaim(next, claim, attester, anchored)
      break
  }
  return next
}

/** A claim bound to the caller and its documents' anchored roots (zk/bindings.ts); recorded once. */
function recordClaim(next: VaultState, claim: ZkClaim, attester: string, anchored: { height: number; txHash: string }) {
  const failure = bindingFailure(next, claim, attester)
  if (failure) throw new ExecutionFailure(failure.code, failure.message)
  next.attestations[claimKeyOf(claim.circuit, claim.publicSignals)] = {
    circuit: claim.circuit, publicSignals: claim.publicSignals, payloadHash: claim.payloadHash, ...(claim.payloadHashB ? { payloadHashB: claim.payloadHashB } : {}),
    attester, height: anchored.height, txHash: anchored.txHash,
  }
}
