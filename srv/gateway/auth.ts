import cds from '@sap/cds'
import { ProductGrants } from '#cds-models/gateway'
import { hashSecret, productOfGrantToken } from './keys.ts'
import { grantPrincipal, type GrantRecord } from './principals.ts'

/**
 * CAP authentication (`cds.requires.auth.impl`). The user is, in this order:
 * 1. the principal the hosted gateway attached (it authenticated the API key already);
 * 2. a product grant presented as `x-agent-token: cga_…|cgb_…` (self-hosted production, spec 5.7);
 * 3. whatever the configured fallback kind says (`mocked` in development, `jwt` in production),
 *    built lazily so a deployment that never needs it does not need its binding either.
 */
const { SELECT } = cds.ql

export default function gatewayAuth(options: any) {
  let fallback: ((req: any, res: any, next: any) => void) | undefined

  // Looked up on every call (one indexed read), so a revoked grant stops at once.
  const grantFor = async (token: string): Promise<GrantRecord | undefined> => {
    const hash = hashSecret(token)
    const row: any = await cds.tx(() => SELECT.one.from(ProductGrants).where`tokenHash = ${hash} and status = 'active' and (validUntil is null or validUntil > ${new Date().toISOString()})`)
    return row && { ID: row.ID, product: row.product, allowedOperations: JSON.parse(row.allowedOperations ?? '[]') }
  }

  return async function authenticate(req: any, res: any, next: (error?: unknown) => void) {
    try {
      if (req.gatewayPrincipal) {
        cds.context!.user = req.user = req.gatewayPrincipal
        return next()
      }
      const token = req.headers['x-agent-token']
      if (typeof token === 'string' && productOfGrantToken(token.trim())) {
        const grant = await grantFor(token.trim())
        if (!grant) return unauthorized(res, 'GRANT_INVALID', 'The agent grant token is unknown, revoked or expired')
        cds.context!.user = req.user = grantPrincipal(grant)
        return next()
      }
      fallback ??= (cds.middlewares as any).auth({ ...options, kind: options.fallback ?? 'mocked', impl: undefined })
      return fallback!(req, res, next)
    } catch (error) {
      next(error)
    }
  }
}

function unauthorized(res: any, code: string, message: string) {
  res.status(401).set('WWW-Authenticate', 'Bearer realm="chain-access"').json({ error: { code, message } })
}
