/**
 * JSON as Ogmios writes and reads it: integers beyond 2^53 are plain integer literals (JSON
 * "bigints"), never strings or rounded floats. Answers are built with `bigint` wherever a quantity
 * can grow (lovelace, asset quantities, supplies); `stringify` writes those as digits.
 */

export function stringify(value: unknown): string {
  return write(value) ?? 'null'
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'bigint': return value.toString()
    case 'number': return Number.isFinite(value) ? String(value) : 'null'
    case 'string': return JSON.stringify(value)
    case 'boolean': return value ? 'true' : 'false'
    case 'undefined': case 'function': case 'symbol': return undefined
  }
  if (value === null) return 'null'
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('hex'))
  if (Array.isArray(value)) return `[${value.map(item => write(item) ?? 'null').join(',')}]`
  const fields: string[] = []
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const text = write(item)
    if (text !== undefined) fields.push(`${JSON.stringify(key)}:${text}`)
  }
  return `{${fields.join(',')}}`
}

/**
 * Parses a request; integers that a double cannot hold exactly come back as `bigint` (read from
 * their source text), so lovelace in an additional UTxO set keeps every digit. The same reading
 * as the product's Ogmios client.
 */
export { parseOgmiosJson as parse } from '../../../srv/chains/chain-a/ogmios-rpc.ts'
