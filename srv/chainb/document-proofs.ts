import { randomBytes } from 'node:crypto'
import { fieldOfHex, fieldOfText } from '../chains/chain-b/zk/field.ts'
import { allowedValuesSet, documentParam, preparedDocument, proofFieldsParam } from '../chainb-params/documents.ts'
import { ApiError, badInput } from '../lib/errors.ts'
import { optionalHash32 } from './inputs.ts'

/**
 * Content roots and membership sets, computed here and recorded nowhere: what a caller anchors
 * (anchorDocument with contentRoot and schemaId) and what its proofs need (salts, paths, the opening).
 */

/** A document proven about is at most this many bytes of JSON text. */
const MAX_DOCUMENT_BYTES = 64 * 1024

export function prepareDocumentProof(data: { documentJson?: unknown; proofFieldsJson?: unknown; saltSeed?: unknown }) {
  if (typeof data.documentJson !== 'string') throw badInput('MISSING_PARAMETER', 'documentJson (the document as JSON text) is required', 'documentJson')
  if (Buffer.byteLength(data.documentJson, 'utf8') > MAX_DOCUMENT_BYTES)
    throw new ApiError(413, 'DOCUMENT_TOO_LARGE', `documentJson must be at most ${MAX_DOCUMENT_BYTES} bytes`, { target: 'documentJson' })
  const document = documentParam(data.documentJson)
  const specs = proofFieldsParam(data.proofFieldsJson)
  const saltSeed = optionalHash32(data.saltSeed, 'saltSeed') ?? randomBytes(32).toString('hex')
  return preparedDocument(document, specs, saltSeed)
}

export function prepareMembershipSet(data: { allowedValuesJson?: unknown; value?: unknown; valueDigest?: unknown }) {
  const digest = optionalHash32(data.valueDigest, 'valueDigest')
  if (data.value !== undefined && data.value !== null && typeof data.value !== 'string') throw badInput('INVALID_VALUE', 'value must be a text', 'value')
  const member = digest ? fieldOfHex(digest) : typeof data.value === 'string' ? fieldOfText(data.value) : undefined
  const set = allowedValuesSet(data.allowedValuesJson, member)
  return {
    setRoot: set.setRoot, memberCount: set.memberCount, members: set.members,
    setSiblingsJson: set.path ? JSON.stringify(set.path.siblings) : null, setDirsJson: set.path ? JSON.stringify(set.path.dirs) : null,
  }
}
