import type { Probe } from './http.ts'
import type { EdmProperty, EntitySet, Operation } from './metadata.ts'
import { toJson } from './values.ts'

/** Builds requests for operations and entity sets in OData URL and body syntax. */

export const JSON_HEADERS = { 'content-type': 'application/json' }

export const operationGroup = (op: Operation) => `${op.service.name}.${op.name}`
export const setGroup = (set: EntitySet) => `${set.service.name}.${set.name}`

/** An OData literal for a URL: strings quoted (quotes doubled), GUIDs bare, collections and objects as JSON. */
export function literal(value: unknown, type = 'Edm.String'): string {
  if (typeof value === 'string') return type === 'Edm.Guid' && /^[0-9a-f-]{36}$/i.test(value) ? value : `'${value.replace(/'/g, "''")}'`
  if (value !== null && typeof value === 'object') return toJson(value)
  return String(value)
}

/** encodeURIComponent, with lone surrogates written as the bytes they would have in WTF-8 (invalid UTF-8). */
export function percentEncode(text: string): string {
  return text.replace(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g, char => {
    const code = char.charCodeAt(0)
    if (char.length === 2 || code < 0xd800 || code > 0xdfff) return encodeURIComponent(char)
    return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map(byte => `%${byte.toString(16).toUpperCase()}`).join('')
  })
}

/** Percent-encodes what a query value must not hold raw; keeps OData punctuation readable. */
export const encodeQueryValue = (text: string) => percentEncode(text).replace(/%24/g, '$').replace(/%2C/gi, ',').replace(/%3A/gi, ':').replace(/%40/g, '@')

export const queryString = (options: [string, string][]) => (options.length ? '?' + options.map(([name, value]) => `${name}=${encodeQueryValue(value)}`).join('&') : '')

/** A call of an action (POST, JSON body) or a function (GET, arguments as aliases in the query). */
export function operationProbe(op: Operation, args: Record<string, unknown> | undefined, name: string, kinds: string[], bodyText?: string): Probe {
  const group = operationGroup(op)
  const caseName = `${group}: ${name}`
  if (op.kind === 'action') {
    return { name: caseName, group, kinds, method: 'POST', target: `${op.service.path}/${op.name}`, headers: JSON_HEADERS, body: bodyText ?? toJson(args) }
  }
  const entries = Object.entries(args ?? {})
  const types = new Map(op.parameters.map(p => [p.name, p.type]))
  const parameters = entries.map(([param]) => `${param}=@${param}`).join(',')
  const aliases = entries.map(([param, value]): [string, string] => [`@${param}`, literal(value, types.get(param))])
  return { name: caseName, group, kinds, method: 'GET', target: `${op.service.path}/${op.name}(${parameters})${queryString(aliases)}` }
}

/** `(k='v')` or `(k1='v',k2=1)` (a single key without its name). */
export function keyPredicate(keys: EdmProperty[], values: Record<string, unknown>): string {
  const encoded = (key: EdmProperty) => percentEncode(literal(values[key.name], key.type))
  if (keys.length === 1) return `(${encoded(keys[0])})`
  return `(${keys.map(key => `${key.name}=${encoded(key)}`).join(',')})`
}

export function setProbe(set: EntitySet, suffix: string, options: [string, string][], name: string, kinds: string[]): Probe {
  const group = setGroup(set)
  return { name: `${group}: ${name}`, group, kinds, method: 'GET', target: `${set.service.path}/${set.name}${suffix}${queryString(options)}` }
}
