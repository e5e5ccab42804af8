import { randomBytes } from 'node:crypto'
import { gatewayConfig } from '../gateway/config.ts'
import { laneMac, sameMac } from './lane-secret.ts'

/**
 * Sign-in challenges that need no row until they are used. The nonce carries the challenge: when
 * it was issued, random bytes, and a MAC under the lane secret over both, the address and the
 * network. So any instance recognises a challenge it (or another) issued, for that address only,
 * and rebuilds the exact message the wallet signed; issuing one writes nothing and costs no more
 * than a hash. That a challenge is used once is the sign-in's business (one INSERT unique on the nonce).
 *
 * Nonce (32 bytes, 64 hex): issue time in milliseconds (6 bytes) | random (10 bytes) | MAC (16 bytes).
 */

export const CHALLENGE_SECONDS = 300
const STATEMENT = 'Sign in to the Chain-Access Gateway. No transaction, no fee.'
const ACTION = 'Sign in'
const MAC_PURPOSE = 'wallet sign-in challenge'
const TIME_BYTES = 6
const RANDOM_BYTES = 10
const HEAD_BYTES = TIME_BYTES + RANDOM_BYTES
const MAC_BYTES = 16

export interface Challenge {
  address: string
  /** CAIP-2 style, e.g. `cardano:preprod`. */
  network: string
  nonce: string
  issuedAt: string
  expiresAt: string
  /** The exact text to sign: its UTF-8 bytes are the payload. */
  message: string
}

/** A new challenge for the address on the network, issued `now`. */
export function issueChallenge(address: string, network: string, now = Date.now()): Challenge {
  const head = Buffer.alloc(HEAD_BYTES)
  head.writeUIntBE(now, 0, TIME_BYTES)
  randomBytes(RANDOM_BYTES).copy(head, TIME_BYTES)
  const nonce = Buffer.concat([head, macOf(head, address, network)]).toString('hex')
  return challengeOf(address, network, nonce, now)
}

/**
 * The challenge behind a nonce the client presents for the address, when this gateway issued it
 * for that address and network and it has not expired; undefined otherwise (made up, altered,
 * issued for another address, or expired). The nonce must be 64 hex characters.
 */
export function openChallenge(nonce: string, address: string, network: string, now = Date.now()): Challenge | undefined {
  const bytes = Buffer.from(nonce, 'hex')
  const head = bytes.subarray(0, HEAD_BYTES)
  if (!sameMac(bytes.subarray(HEAD_BYTES), macOf(head, address, network))) return undefined
  const challenge = challengeOf(address, network, nonce, head.readUIntBE(0, TIME_BYTES))
  return Date.parse(challenge.expiresAt) > now ? challenge : undefined
}

const macOf = (head: Buffer, address: string, network: string) => laneMac(MAC_PURPOSE, head.toString('hex'), address, network).subarray(0, MAC_BYTES)

function challengeOf(address: string, network: string, nonce: string, issuedAtMs: number): Challenge {
  const issuedAt = new Date(issuedAtMs).toISOString()
  const expiresAt = new Date(issuedAtMs + CHALLENGE_SECONDS * 1000).toISOString()
  return { address, network, nonce, issuedAt, expiresAt, message: signInMessage({ address, network, nonce, issuedAt, expiresAt }) }
}

/**
 * The text the wallet shows and signs: JSON with CIP-93's `uri`, `action` and `nonce` and SIWE's
 * domain, statement, address, network, issue and expiry times. Domain and URI come from the
 * configured public URL, never from the request's Host header (every instance shares it).
 */
function signInMessage(fields: Omit<Challenge, 'message'>): string {
  const publicUrl = gatewayConfig().publicUrl
  return JSON.stringify({
    domain: new URL(publicUrl).host,
    uri: `${publicUrl}/auth/verify`,
    statement: STATEMENT,
    address: fields.address,
    network: fields.network,
    nonce: fields.nonce,
    issuedAt: fields.issuedAt,
    expirationTime: fields.expiresAt,
    action: ACTION,
  }, null, 2)
}
