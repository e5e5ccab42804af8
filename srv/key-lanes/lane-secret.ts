import { createHmac, timingSafeEqual } from 'node:crypto'
import { requiresOptions } from '../lib/requires-options.ts'
import { isProduction } from '../lib/settings.ts'
import { secretProblem } from '../lib/production-settings.ts'

/**
 * The key lanes' server secret (`GATEWAY_LANE_SECRET`): a MAC under it shows that the gateway
 * itself issued what a client hands back unchanged (a sign-in challenge), so what it issues needs
 * no row until it is used. Every instance of a deployment shares it. Required in production (the
 * lanes' configuration (config.ts) reads it at start, so a missing one refuses the start); a fixed
 * development value elsewhere. Never logged, never part of a message.
 */

/** Stands in for GATEWAY_LANE_SECRET outside production, so development and tests need no secret. */
const DEVELOPMENT_SECRET = 'development-only lane secret: set GATEWAY_LANE_SECRET in production'
/** A shorter secret is refused: it could be guessed offline from one MAC. */
const MIN_SECRET_LENGTH = 32

/** `cds.requires.gateway.laneSecret`, GATEWAY_LANE_SECRET first. */
const options = requiresOptions('gateway', { GATEWAY_LANE_SECRET: 'laneSecret' }, { named: 'variable' })

const configuredSecret = () => options.reader(options.options()).optional('laneSecret')

export function laneSecret(): string {
  const secret = configuredSecret()
  if (secret === undefined) {
    if (isProduction()) throw new Error('GATEWAY_LANE_SECRET must be set in production: the key lanes sign what they issue with it')
    return DEVELOPMENT_SECRET
  }
  if (secret.length < MIN_SECRET_LENGTH) throw new Error(`GATEWAY_LANE_SECRET must have at least ${MIN_SECRET_LENGTH} characters`)
  return secret
}

/** What is wrong with the configured lane secret in production (lib/production-settings.ts). */
export const laneSecretProblem = (): string | undefined => secretProblem('GATEWAY_LANE_SECRET', configuredSecret(), 'the key lanes sign what they issue with it')

/**
 * HMAC-SHA256 under the lane secret of what `purpose` issues: the purpose and the parts are
 * encoded unambiguously, so a MAC made for one purpose (or one split of the parts) never fits another.
 */
export function laneMac(purpose: string, ...parts: string[]): Buffer {
  return createHmac('sha256', laneSecret()).update(JSON.stringify([purpose, ...parts])).digest()
}

/** Whether a presented MAC equals the expected one, in constant time. */
export const sameMac = (presented: Buffer, expected: Buffer): boolean => presented.length === expected.length && timingSafeEqual(presented, expected)
