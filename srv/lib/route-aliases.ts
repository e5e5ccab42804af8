import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * The chain-B routes answer under two spellings (spec 1.5, 9.2): the product's own `/api/v1/...`
 * paths are aliases of the OData paths. One table, applied to a path before anything routes it:
 * self-hosted by the middleware below, on the hosted gateway to the normalised path (so every
 * variant the gateway accepts or refuses under one spelling, it treats the same under the other).
 */
const ROUTE_ALIASES: Readonly<Record<string, string>> = {
  '/api/v1/chainb': '/odata/v4/chainb',
  '/api/v1/indexer': '/odata/v4/chainb-indexer',
  '/api/v1/verify': '/odata/v4/chainb-verify',
}

/** The canonical path of `path` (with or without a query): an alias base followed by `/`, `?` or nothing is replaced. */
export function canonicalPath(path: string): string {
  for (const [alias, canonical] of Object.entries(ROUTE_ALIASES)) {
    if (!path.startsWith(alias)) continue
    const next = path.charAt(alias.length)
    if (next === '' || next === '/' || next === '?') return canonical + path.slice(alias.length)
  }
  return path
}

/** Rewrites an aliased request target to its canonical path before the services' routers see it. */
export function followRouteAliases(req: IncomingMessage, _res: ServerResponse, next: () => void) {
  if (req.url?.startsWith('/api/v1/')) req.url = canonicalPath(req.url)
  next()
}
