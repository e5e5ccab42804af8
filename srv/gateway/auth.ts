import cds from '@sap/cds'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { ProductGrant, ProductGrants } from '#cds-models/gateway'
import { ApiError } from '../lib/errors.ts'
import { recordKeyId } from '../lib/access-log.ts'
import { hashSecret, productOfGrantToken } from './keys.ts'
import { grantPrincipal, type GrantRecord } from './principals.ts'

/**
 * CAP authentication (`cds.requires.auth.impl`). The user is, in this order:
 * 1. the principal the hosted gateway attached (it authenticated the API key already);
 * 2. a product grant presented as `x-agent-token: cga_…|cgb_…` (self-hosted production, spec 5.7);
 * 3. whatever the configured fallback kind says (`mocked` in development, `jwt` in production),
 *    built lazily so a deployment that never needs it does not need its binding either. It gets
 *    this entry's options, credentials included: CAP fills `cds.requires.auth.credentials` from the
 *    binding its `vcap` names (`{ label: 'xsuaa' }` in production), as it does for its own kinds.
 */
const { SELECT } = cds.ql

interface AuthOptions {
  /** The auth kind used for calls with neither a gateway principal nor a grant token. */
  fallback?: string
  [option: string]: unknown
}

type AuthRequest = Request & { gatewayPrincipal?: cds.User; user?: cds.User }
/** CAP's own auth middleware factory (not in cds-types). */
type AuthFactory = (options: object) => RequestHandler

export default function gatewayAuth(options: AuthOptions) {
  let fallback: RequestHandler | undefined

  return async function authenticate(req: AuthRequest, res: Response, next: NextFunction) {
    try {
      if (req.gatewayPrincipal) {
        cds.context!.user = req.user = req.gatewayPrincipal
        return next()
      }
      const token = req.headers['x-agent-token']
      if (typeof token === 'string' && productOfGrantToken(token.trim())) {
        const grant = await grantFor(token.trim())
        if (!grant) return unauthorized(res, 'GRANT_INVALID', 'The agent grant token is unknown, revoked or expired')
        recordKeyId(req, grant.ID)
        cds.context!.user = req.user = grantPrincipal(grant)
        return next()
      }
      fallback ??= (cds.middlewares as unknown as { auth: AuthFactory }).auth({ ...options, kind: options.fallback ?? 'mocked', impl: undefined })
      return fallback(req, res, error => next(error === 500 ? identityProviderUnavailable() : error))
    } catch (error) {
      next(error)
    }
  }
}

/**
 * CAP's token-verifying kinds answer a bare 500 (and log the cause) when the token could not be
 * checked at all, the identity provider's keys out of reach say: not the caller's fault, and passing.
 */
const identityProviderUnavailable = () =>
  new ApiError(503, 'IDENTITY_PROVIDER_UNAVAILABLE', 'The token could not be verified: the identity provider did not answer; try again shortly')

/** The active, unexpired grant with this token, looked up on every call (one indexed read), so a revoked grant stops at once. */
async function grantFor(token: string): Promise<GrantRecord | undefined> {
  const hash = hashSecret(token)
  const now = new Date().toISOString()
  const row = await cds.tx(() => SELECT.one.from(ProductGrants).columns('ID', 'product', 'allowedOperations', 'subject')
    .where`tokenHash = ${hash} and status = ${ProductGrant.status.active} and (validUntil is null or validUntil > ${now})`)
  return row ? { ID: row.ID!, product: row.product!, allowedOperations: JSON.parse(row.allowedOperations ?? '[]'), subject: row.subject } : undefined
}

/** Self-hosted, nothing is metered: the refusal carries no units headers. */
function unauthorized(res: Response, code: string, message: string) {
  res.status(401).set('WWW-Authenticate', 'Bearer realm="chain-access"').json({ error: { code, message } })
}
