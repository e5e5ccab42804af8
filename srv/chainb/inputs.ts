import { ApiError, badInput } from '../lib/errors.ts'
import { DISCLOSURE_ROLES, type DisclosureRole } from '../chains/chain-b/vault.ts'

/**
 * The checks of the operations' parameters: all refuse with a 4xx and a stable code before
 * anything is queued.
 */

/** Metadata is stored with the document and hashed into the anchor; larger is refused. */
const MAX_METADATA_BYTES = 4096

export { hash32, optionalHash32 } from '../lib/hash-inputs.ts'

export function metadataText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw badInput('INVALID_METADATA', 'metadata must be a string (JSON text, for instance)', 'metadata')
  if (Buffer.byteLength(value, 'utf8') > MAX_METADATA_BYTES)
    throw new ApiError(413, 'METADATA_TOO_LARGE', `metadata must be at most ${MAX_METADATA_BYTES} bytes of UTF-8`, { target: 'metadata' })
  return value
}

export function optionalSize(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined
  const size = Number(value)
  if (!Number.isSafeInteger(size) || size < 0) throw badInput('INVALID_SIZE', 'size must be a whole number of bytes, at least 0', 'size')
  return size
}

export function idempotencyKeyOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || value.length > 128 || !/^[\x21-\x7e]+$/.test(value))
    throw badInput('INVALID_IDEMPOTENCY_KEY', 'idempotencyKey must be 1 to 128 printable ASCII characters without spaces', 'idempotencyKey')
  return value
}

export function requiredText(value: unknown, name: string, maxLength: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw badInput('MISSING_PARAMETER', `${name} is required`, name)
  if (value.length > maxLength) throw badInput('PARAMETER_TOO_LONG', `${name} must be at most ${maxLength} characters`, name)
  return value
}

export function optionalText(value: unknown, name: string, maxLength: number): string | undefined {
  return value === undefined || value === null || value === '' ? undefined : requiredText(value, name, maxLength)
}

/** A disclosure role by name or by level (0|1|2); neither given is public_only. Both given must agree. */
export function disclosureRole(level: unknown, role: unknown): DisclosureRole {
  const byLevel = level === undefined || level === null ? undefined : DISCLOSURE_ROLES[Number(level)]
  const byName = role === undefined || role === null || role === '' ? undefined : DISCLOSURE_ROLES.find(known => known === role)
  if (level !== undefined && level !== null && (!Number.isInteger(Number(level)) || byLevel === undefined))
    throw badInput('UNKNOWN_DISCLOSURE_ROLE', `level must be 0, 1 or 2 (${DISCLOSURE_ROLES.join(', ')})`, 'level')
  if (role !== undefined && role !== null && role !== '' && byName === undefined)
    throw badInput('UNKNOWN_DISCLOSURE_ROLE', `role must be one of ${DISCLOSURE_ROLES.join(', ')}`, 'role')
  if (byLevel && byName && byLevel !== byName) throw badInput('UNKNOWN_DISCLOSURE_ROLE', `level ${String(level)} is ${byLevel}, not ${String(role)}`, 'role')
  return byName ?? byLevel ?? 'public_only'
}
