import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'
import type { ProductGrant } from '#cds-models/gateway'

/**
 * Secrets: a fixed prefix, an underscore, 256 random bits (base64url) and a 6-character checksum,
 * so a mistyped or made-up key is refused before any database lookup. API keys start `cag_`;
 * product-grant tokens `cga_` (chain A) and `cgb_` (chain B). Only SHA-256 hashes are stored.
 */
export const API_KEY_PREFIX = 'cag'
/** The products a grant is for, as the model enumerates them (`ProductGrants.product`). */
export type Product = NonNullable<ProductGrant['product']>
export const GRANT_PREFIXES: Readonly<Record<Product, string>> = { 'chain-a': 'cga', 'chain-b': 'cgb' }

export const isProduct = (name: string): name is Product => Object.hasOwn(GRANT_PREFIXES, name)

/**
 * What `@gateway.product` may name: a granted product, or any other name, a product the gateway
 * serves on the key alone, with no grant underneath (read-only, nothing owned).
 */
export type ServedProduct = string

const BODY = /^([a-z]{3})_([A-Za-z0-9_-]{43})([A-Za-z0-9_-]{6})$/

export function newSecret(prefix: string): string {
  const body = randomBytes(32).toString('base64url')
  return `${prefix}_${body}${checksum(body)}`
}

/** The prefix of a well-formed secret (checksum verified), or undefined. */
export function prefixOf(secret: string): string | undefined {
  const match = BODY.exec(secret)
  if (!match || checksum(match[2]) !== match[3]) return undefined
  return match[1]
}

export const isApiKey = (secret: string) => prefixOf(secret) === API_KEY_PREFIX

export function productOfGrantToken(secret: string): Product | undefined {
  const prefix = prefixOf(secret)
  return (Object.keys(GRANT_PREFIXES) as Product[]).find(product => GRANT_PREFIXES[product] === prefix)
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex')

/** Compares two SHA-256 hex digests in constant time. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === 32 && right.length === 32 && timingSafeEqual(left, right)
}

export const hintOf = (secret: string) => secret.slice(0, 12)

function checksum(body: string): string {
  const sum = Buffer.alloc(4)
  sum.writeUInt32BE(crc32(body))
  return sum.toString('base64url').slice(0, 6)
}
