import { badInput } from './errors.ts'

const HEX_32 = /^[0-9a-fA-F]{64}$/

/** A SHA-256 digest or a 32-byte id: 64 hex characters, answered lowercase; else 400 INVALID_HASH naming the parameter. */
export function hash32(value: unknown, name: string): string {
  if (typeof value !== 'string' || !HEX_32.test(value)) throw badInput('INVALID_HASH', `${name} must be 64 hex characters (a SHA-256 digest)`, name)
  return value.toLowerCase()
}

export const optionalHash32 = (value: unknown, name: string): string | undefined =>
  value === undefined || value === null || value === '' ? undefined : hash32(value, name)
