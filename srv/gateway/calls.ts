import type { IncomingHttpHeaders } from 'node:http'
import type { KeyRecord } from './accounts.ts'

/** What a route of the gateway's own (own-routes.ts) is given of its call. */

export interface OwnCall {
  query: URLSearchParams
  /** The JSON body of a POST; undefined when there is none. Invalid JSON never reaches a route (400 INVALID_JSON). */
  body: unknown
  headers: IncomingHttpHeaders
  /** The client's address, for limits on failed attempts. */
  client: string
}

export interface KeyedCall extends OwnCall {
  key: KeyRecord
}

export interface MaybeKeyedCall extends OwnCall {
  key?: KeyRecord
}
