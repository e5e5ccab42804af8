import cds from '@sap/cds'
import { badInput } from './errors.ts'
import { guardQueryOptions } from './query-options.ts'
import { shadowingMessage, shadowingProperty } from './shadowing-properties.ts'

/**
 * One guard in front of every event of every application service, before CAP's own checks and
 * before any handler reads the input, so a new service or action is covered without code of its
 * own. CAP then checks the declared parameter types and refuses unknown parameters.
 *
 * - READ: the query options as CAP sees them, and what the read may cost (query-options.ts).
 * - Operations: the body is a JSON object.
 * - Operations and entity writes (where a service allows them): UUIDs are UUIDs; whole numbers are
 *   whole numbers; no string carries a NUL character (PostgreSQL cannot store one); JSON carried
 *   in a string (a type annotated `@json`) is nested at most MAX_JSON_DEPTH levels; an object or
 *   array never stands where a single value is declared (nor as an update expression), and no property anywhere in the body is
 *   named like a member of every object (`toString`, `constructor`, …: string conversions fail on it).
 */

export const MAX_JSON_DEPTH = 32

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const { UUID: UUIDType, Integer, Int16, Int32, Int64, UInt8 } = (cds as any).builtin.classes
const WHOLE_NUMBER_TYPES = [Integer, Int16, Int32, Int64, UInt8]

const WRITES = new Set(['CREATE', 'UPDATE', 'UPSERT'])

/** Checks the input; answers the check the answer must pass too, for a read that needs one. */
export function checkInput(srv: cds.Service, req: cds.Request): ((result: unknown) => void) | undefined {
  if (req.event === 'READ') return guardQueryOptions(req)
  if (WRITES.has(req.event) && req.target) {
    refuseBodiesThatAreNoObject(req)
    refuseShadowingProperties(req.data)
    refuseUpdateExpressions(req)
    checkValues((req.target as any).elements ?? {}, req.data)
    return undefined
  }
  const operation = (srv as any).actions?.[req.event] ?? (req.target as any)?.actions?.[req.event]
  if (operation) checkOperation(operation, req)
  return undefined
}

function checkOperation(operation: any, req: cds.Request) {
  const data = req.data as unknown
  if (!isPlainObject(data)) {
    throw badInput('INVALID_BODY', `The body of ${operation.name.split('.').pop()} must be a JSON object of its parameters, got ${describe(data)}`)
  }
  refuseShadowingProperties(data)
  checkValues(operation.params ?? {}, data)
}

/**
 * An entity written over HTTP takes one JSON object of its properties. CAP's adapter turns a number
 * or string body into an object of no properties (a PATCH of nothing, a record of defaults): refused.
 */
function refuseBodiesThatAreNoObject(req: cds.Request) {
  const body = (req as { http?: { req?: { body?: unknown } } }).http?.req?.body
  if (body !== undefined && !isPlainObject(body)) throw badInput('INVALID_BODY', bodyNotAnObjectMessage(body))
}

/** The message for a write whose body is no JSON object (error-codes.ts answers the same). */
export const bodyNotAnObjectMessage = (body: unknown) => `The body must be a JSON object, got ${describe(body)}`

/** A body with a property named like a member of every object (`toString`, `constructor`, …), at any depth. */
function refuseShadowingProperties(data: unknown) {
  const at = shadowingProperty(data)
  if (at) throw badInput('INVALID_PROPERTY_NAME', shadowingMessage(at), at)
}

/**
 * An object given for a single value in a PATCH or PUT: CAP takes it for an update expression
 * (`{"+=": 1}` would be applied, any other object fails in the database) and moves it out of
 * `req.data` into the query's `with`, where checkValues never sees it.
 */
function refuseUpdateExpressions(req: cds.Request) {
  const expressions = Object.keys((req.query as { UPDATE?: { with?: Record<string, unknown> } } | undefined)?.UPDATE?.with ?? {})
  if (expressions.length) throw badInput('ASSERT_DATA_TYPE', `${expressions.join(', ')} must be a single value, not an object or an array`, expressions[0])
}

/** Checks the given values of declared parameters or elements; undeclared ones are CAP's to refuse. */
function checkValues(declared: Record<string, any>, data: unknown) {
  if (!isPlainObject(data)) return
  for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
    const type = declared[name]
    if (!type || value === undefined || value === null) continue
    if (Array.isArray(value) && type.items) value.forEach((item, index) => checkValue(type.items, item, `${name}[${index}]`))
    else checkValue(type, value, name)
  }
}

const { scalar: Scalar } = (cds as any).builtin.classes

function checkValue(type: any, value: unknown, target: string) {
  if (typeof value === 'object' && value !== null && type instanceof Scalar) {
    throw badInput('ASSERT_DATA_TYPE', `${target} must be a single ${String(type.type ?? 'value').replace(/^cds\./, '')}, got ${describe(value)}`, target)
  }
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw badInput('INVALID_CHARACTER', `${target} contains a NUL character`, target)
    if (type instanceof UUIDType && !UUID.test(value)) throw badInput('INVALID_UUID', `${target} must be a UUID (8-4-4-4-12 hexadecimal digits), got '${clip(value)}'`, target)
    if (type['@json'] && jsonDepth(value) > MAX_JSON_DEPTH) throw badInput('JSON_TOO_DEEP', `${target} nests JSON more than ${MAX_JSON_DEPTH} levels deep`, target)
  }
  if (typeof value === 'number' && WHOLE_NUMBER_TYPES.some(wholeNumber => type instanceof wholeNumber) && !Number.isSafeInteger(value)) {
    throw badInput('INVALID_INTEGER', `${target} must be a whole number, got ${value}`, target)
  }
}

/** The deepest nesting of arrays and objects in a JSON text, counted without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const character = text[i]
    if (inString) {
      if (character === '\\') i++
      else if (character === '"') inString = false
    } else if (character === '"') inString = true
    else if (character === '[' || character === '{') deepest = Math.max(deepest, ++depth)
    else if (character === ']' || character === '}') depth--
  }
  return deepest
}

const isPlainObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value)

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}

const clip = (text: string) => (text.length > 60 ? text.slice(0, 57) + '...' : text)
