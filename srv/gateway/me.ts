import cds from '@sap/cds'
import type { ServerResponse } from 'node:http'
import { ApiKeys, LedgerEntries, Prices } from '#cds-models/gateway'
import { revokeKey, rotateKey } from './accounts.ts'
import { mcpClientConfiguration } from './client-config.ts'
import type { Gateway, Request } from './gateway.ts'
import { reply } from './reply.ts'
import type { GatewayHandler } from './routes.ts'

/**
 * The gateway's own routes, free of charge: /me (the key's account), /me/ledger (its ledger, newest
 * first, paged by cursor), /me/rotate (a new secret; units and ledger stay), /me/revoke (the key and
 * both grants), /prices (no key needed).
 */

const { SELECT } = cds.ql
const LAST_CALLS = 10
const PAGE_DEFAULT = 50
const PAGE_MAX = 200

export class GatewayRoutes {
  private readonly gateway: Gateway

  constructor(gateway: Gateway) {
    this.gateway = gateway
  }

  async handle(handler: GatewayHandler, req: Request, res: ServerResponse) {
    res.setHeader('x-access-units-charged', 0)
    if (handler === 'prices') return sendJson(res, 200, await priceTable())
    // Read fresh: what a key may do about itself never rests on a cached copy.
    const key = await this.gateway.authenticate(req, res, { fresh: true })
    if (!key || !this.gateway.takeRate(key, res)) return
    switch (handler) {
      case 'me': {
        const body = await account(key.ID)
        res.setHeader('x-access-units-left', body.unitsLeft)
        return sendJson(res, 200, body)
      }
      case 'ledger':
        return this.ledger(key.ID, req, res)
      case 'rotate': {
        const rotated = await rotateKey(key.ID, key.secretHash)
        this.gateway.forget(key.ID)
        if (!rotated) return reply(res, 401, 'KEY_INVALID', 'The API key is unknown or revoked')
        return sendJson(res, 200, { id: rotated.id, key: rotated.key, mcpClientConfiguration: mcpClientConfiguration(rotated.key, this.gateway.config.publicUrl) })
      }
      case 'revoke': {
        const revoked = await revokeKey(key.ID, key.secretHash)
        this.gateway.forget(key.ID)
        if (!revoked) return reply(res, 401, 'KEY_INVALID', 'The API key is unknown or revoked')
        return sendJson(res, 200, { id: key.ID, status: 'revoked' })
      }
    }
  }

  private async ledger(keyId: string, req: Request, res: ServerResponse) {
    const params = new URL(req.url ?? '/', 'http://gateway').searchParams
    const limit = Number(params.get('limit') ?? PAGE_DEFAULT)
    if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX) return reply(res, 400, 'INVALID_LIMIT', `limit must be a whole number from 1 to ${PAGE_MAX}`)
    const cursor = params.get('before')
    const before = cursor ? decodeCursor(cursor) : undefined
    if (cursor && !before) return reply(res, 400, 'INVALID_CURSOR', 'before must be a cursor from a previous page (next)')
    const page = await cds.tx(() => {
      const query = SELECT.from(LedgerEntries)
        .columns('ID', 'kind', 'units', 'state', 'routeClass', 'route', 'requestId', 'outcome', 'note', 'createdAt', 'resolvedAt')
        .where({ apiKey_ID: keyId })
        .orderBy('createdAt desc', 'ID desc')
        .limit(limit + 1)
      if (before) query.where`(createdAt < ${before.at} or (createdAt = ${before.at} and ID < ${before.id}))`
      return query
    })
    const entries = page.slice(0, limit).map((entry: any) => ({ ...entry, units: Number(entry.units) }))
    const last = entries[entries.length - 1]
    sendJson(res, 200, { value: entries, next: page.length > limit ? encodeCursor(last.createdAt, last.ID) : null })
  }
}

async function account(keyId: string) {
  return cds.tx(async () => {
    const key: any = await SELECT.one.from(ApiKeys)
      .columns('ID', 'hint', 'plan_name', 'unitsLeft', 'validUntil', 'status', 'boundAddress', 'label', 'createdAt', 'rotatedAt', 'lastUsedAt')
      .where({ ID: keyId })
    const lastCalls = await SELECT.from(LedgerEntries)
      .columns('createdAt', 'route', 'routeClass', 'units', 'state', 'outcome')
      .where({ apiKey_ID: keyId, kind: 'charge' })
      .orderBy('createdAt desc')
      .limit(LAST_CALLS)
    return {
      id: key.ID, hint: key.hint, plan: key.plan_name, unitsLeft: Number(key.unitsLeft), validUntil: key.validUntil, status: key.status,
      boundAddress: key.boundAddress, label: key.label, createdAt: key.createdAt, rotatedAt: key.rotatedAt, lastUsedAt: key.lastUsedAt,
      lastCalls: lastCalls.map((call: any) => ({ at: call.createdAt, route: call.route, routeClass: call.routeClass, units: -Number(call.units), state: call.state, outcome: call.outcome })),
    }
  })
}

async function priceTable() {
  const prices = await cds.tx(() => SELECT.from(Prices).orderBy('units', 'routeClass'))
  return {
    value: prices.map((price: any) => ({ routeClass: price.routeClass, units: Number(price.units), description: price.description })),
    rules: [
      'A GET of an entity set or entity costs entity-read; a forwarded action or function costs its class (read-action unless the service prices it as build, submit, signing-request, chainb-write, proof or analytics).',
      'Units are reserved before the call and refunded when the answer is an error (4xx or 5xx) or no answer comes within the timeout.',
      'Free: $metadata, service documents, the chain-B verify lane, /zk-config, /me, /me/ledger, /me/rotate, /me/revoke, /prices, /health.',
    ],
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.statusCode = status
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify(body))
}

const encodeCursor = (at: string, id: string) => Buffer.from(`${at}|${id}`).toString('base64url')

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i

/** A cursor is exactly what encodeCursor wrote: an ISO timestamp and a ledger entry id. */
function decodeCursor(cursor: string): { at: string; id: string } | undefined {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString())
  return match && !Number.isNaN(Date.parse(match[1])) ? { at: match[1], id: match[2] } : undefined
}
