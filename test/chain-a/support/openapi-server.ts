import { generateSchemas, getSchemaForEndpoint } from '@blockfrost/openapi'
import type { ServerResponse } from 'node:http'
import { sendJson, sendUpstreamError, startTestServer, type RecordedRequest, type TestServer } from './test-server.ts'

/**
 * A Blockfrost look-alike whose answers are synthesised from the 200 response schemas of
 * @blockfrost/openapi: each property's `example`, else the value the enclosing example gives,
 * else a type-correct value; the first branch of anyOf/oneOf; arrays follow their example
 * (one element when there is none).
 */

interface Schema {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  example?: unknown
  enum?: unknown[]
  anyOf?: Schema[]
  oneOf?: Schema[]
}

const templates = Object.keys(generateSchemas())
  .map(template => ({ template, pattern: templatePattern(template), params: (template.match(/\{/g) ?? []).length }))
  // Literal segments win over parameters: /blocks/latest before /blocks/{hash_or_number}.
  .sort((a, b) => a.params - b.params)

function templatePattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')
  return new RegExp(`^${escaped}$`)
}

/** The OpenAPI path template a request path matches, e.g. /txs/{hash}/utxos. */
export function templateFor(path: string): string | undefined {
  return templates.find(t => t.pattern.test(path))?.template
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A stable small number per field name, so that distinct fields get distinct values. */
function fieldNumber(key: string): number {
  let sum = 0
  for (const char of key) sum = (sum * 31 + char.charCodeAt(0)) % 997
  return sum + 1
}

function scalar(schema: Schema, key: string): unknown {
  if (schema.enum) return schema.enum[0]
  switch (schema.type) {
    case 'string':
      return `sample-${key}`
    case 'integer':
      return fieldNumber(key)
    case 'number':
      return fieldNumber(key) + 0.25
    case 'boolean':
      return true
    default:
      return { [key]: 'sample' }
  }
}

function synthObject(schema: Schema, source: Record<string, unknown>): Record<string, unknown> {
  if (!schema.properties) return Object.keys(source).length > 0 ? source : { sample: true }
  const body: Record<string, unknown> = {}
  for (const [key, property] of Object.entries(schema.properties)) body[key] = synthesise(property, key, source[key])
  for (const key of schema.required ?? []) if (!(key in body)) body[key] = source[key] ?? `sample-${key}`
  return body
}

function synthesise(schema: Schema, key: string, hint?: unknown): unknown {
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0]
  if (branch) return synthesise({ example: schema.example, ...branch }, key, hint)
  if (schema.type === 'array') {
    const source = Array.isArray(schema.example) ? schema.example : Array.isArray(hint) ? hint : [undefined]
    return schema.items ? source.map(element => synthesise(schema.items as Schema, key, element)) : source
  }
  if (schema.type === 'object' || schema.properties) {
    return synthObject(schema, isRecord(schema.example) ? schema.example : isRecord(hint) ? hint : {})
  }
  if (schema.example !== undefined) return schema.example
  if (hint !== undefined) return hint
  return scalar(schema, key)
}

/** The 200 body for an OpenAPI path template. */
export function synthesiseBody(template: string): unknown {
  return synthesise(getSchemaForEndpoint(template).response['200'] as Schema, 'body')
}

/** The body the server answers for a request path. */
export function bodyFor(path: string): unknown {
  const template = templateFor(path)
  if (!template) throw new Error(`no Blockfrost endpoint matches ${path}`)
  return synthesiseBody(template)
}

/** Answers like Blockfrost would, with the synthesised 200 body or a 404 for unknown paths. */
export function answerFromSchemas(request: RecordedRequest, response: ServerResponse): void {
  const template = templateFor(request.path)
  if (!template) return sendUpstreamError(response, 404, 'The requested component has not been found.')
  sendJson(response, 200, synthesiseBody(template))
}

export async function startOpenApiServer(): Promise<TestServer> {
  return startTestServer(answerFromSchemas)
}
