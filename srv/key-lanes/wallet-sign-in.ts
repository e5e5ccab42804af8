import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiKey, ApiKeys, SignInChallenges, WalletSessions } from '#cds-models/gateway'
import { revokeKey, rotateKey } from '../gateway/accounts.ts'
import { ok, refusal, type Answer } from '../gateway/answers.ts'
import { gatewayConfig } from '../gateway/config.ts'
import { laneConfig } from './config.ts'
import { deliverKey } from '../gateway/key-delivery.ts'
import { undrawnLeased } from '../gateway/ledger.ts'
import { hashSecret, newSecret, prefixOf } from '../gateway/keys.ts'
import type { OwnCall } from '../gateway/calls.ts'
import { FailureWindow } from '../gateway/rate-limits.ts'
import { issueChallenge, openChallenge, type Challenge } from './sign-in-challenge.ts'
import { freeUnitsAnswer, freeUnitsFor } from './wallet-free-units.ts'
import { chainA } from '../chains/chain-a/index.ts'
import { addressNetworkId, decodeAddress, networkIdOf } from '../chains/chain-a/csl.ts'
import { verifyDataSignature, type DataSignatureProblem } from '../chains/chain-a/signing/data-signature.ts'
import { runWrite, tableOf } from '../lib/plain-sql.ts'

/**
 * The wallet lane: sign-in with a CIP-30 wallet, no transaction. POST /auth/challenge issues a
 * one-time message for an address (nonce, the configured domain and URI, network, expiry in five
 * minutes) and stores nothing: the nonce carries a MAC (sign-in-challenge.ts). The wallet signs
 * the message's UTF-8 bytes with `signData`; POST /auth/verify rebuilds the message from the
 * nonce, checks the signature (signing/data-signature.ts) against it, then uses the challenge with
 * one INSERT unique on the nonce (of concurrent verifies of one nonce exactly one wins). A sign-in
 * opens a short session (`cgs_…`, not a key) that lists, rotates and revokes the keys bound to the
 * address; a wallet's first sign-in may also get its free first key (wallet-free-units.ts).
 */

const { SELECT, INSERT, UPDATE } = cds.ql

const SESSION_PREFIX = 'cgs'
const ADDRESS_PREFIX = /^(addr|stake)(_test)?1[02-9ac-hj-np-z]+$/
const MAX_ADDRESS_LENGTH = 120
const NONCE = /^[0-9a-f]{64}$/
const HEX = /^[0-9a-fA-F]+$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SESSION_CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="chain-access wallet session"' }

const CHALLENGE_INVALID = refusal(401, 'CHALLENGE_INVALID', 'The sign-in challenge is unknown, expired or already used (or was issued for another address): ask POST /auth/challenge for a new one')
const SESSION_INVALID = refusal(401, 'SESSION_INVALID', 'Send a valid wallet session as Authorization: Bearer cgs_… (POST /auth/verify opens one; it expires and ends at sign-out)', {}, SESSION_CHALLENGE)

// ---- POST /auth/challenge ------------------------------------------------------------------

/**
 * A challenge for the address. It is written nowhere and costs an address check and a hash, so
 * it needs no limit of its own: no client can use up what another client's sign-in needs.
 */
export async function walletChallenge(call: OwnCall): Promise<Answer> {
  const fields = fieldsOf(call.body, '{ "address": "<your bech32 address>" }')
  if (!fields.ok) return fields.answer
  const network = await deploymentNetwork()
  const address = signInAddress(fields.value.address, network.id)
  if (!address.ok) return address.answer
  const { nonce, message, issuedAt, expiresAt } = issueChallenge(address.value, network.caip)
  return ok({ address: address.value, network: network.caip, nonce, message, payloadHex: Buffer.from(message, 'utf8').toString('hex'), issuedAt, expiresAt })
}

async function deploymentNetwork() {
  const { networkName } = await chainA()
  return { id: networkIdOf(networkName), caip: `cardano:${networkName}` }
}

// ---- POST /auth/verify ---------------------------------------------------------------------

let verifyFailures: FailureWindow | undefined

/** Failed verifications per client address, across instances; a successful one is never refused for them. */
function failures(): FailureWindow {
  const { authFailures, authFailureWindowS } = gatewayConfig()
  return (verifyFailures ??= new FailureWindow('wallet-verify', authFailures, authFailureWindowS))
}

export async function walletVerify(call: OwnCall): Promise<Answer> {
  const answer = await verify(call.body)
  if (answer.status === 200) return answer
  const blockedFor = await failures().fail(call.client)
  if (blockedFor) return refusal(429, 'TOO_MANY_FAILED_ATTEMPTS', `Too many failed sign-ins from this address; retry after ${blockedFor} s`, {}, { 'Retry-After': blockedFor })
  return answer
}

interface SignIn {
  address: string
  nonce: string
  signature: string
  key: string
}

async function verify(body: unknown): Promise<Answer> {
  const request = await signInRequest(body)
  if (!request.ok) return request.answer
  const { address, nonce } = request.value
  const challenge = openChallenge(nonce, address, (await deploymentNetwork()).caip)
  if (!challenge) return CHALLENGE_INVALID

  const check = verifyDataSignature({ address, signature: request.value.signature, key: request.value.key, payload: Buffer.from(challenge.message, 'utf8') })
  if (!check.valid) return signatureRefusal(check.code, check.message)

  const session = await cds.tx(() => signIn(challenge))
  if (!session) return CHALLENGE_INVALID
  const freeUnits = await freeUnitsFor(address)
  if ('given' in freeUnits) return ok(deliverKey(freeUnits.given, { address, session, freeUnits: freeUnitsAnswer(freeUnits, address) }))
  return ok({ address, session, keys: await keysBoundTo(address), freeUnits: freeUnitsAnswer(freeUnits, address) })
}

const FORMAT_PROBLEMS: Partial<Record<DataSignatureProblem, string>> = {
  MALFORMED_SIGNATURE: 'INVALID_SIGNATURE_FORMAT',
  MALFORMED_KEY: 'INVALID_KEY_FORMAT',
}

/** What is not a COSE_Sign1 or COSE_Key at all is bad input (400); a signature that does not hold is 401. */
function signatureRefusal(problem: DataSignatureProblem, message: string): Answer {
  const format = FORMAT_PROBLEMS[problem]
  if (format) return refusal(400, format, message, { reason: problem })
  return refusal(401, 'SIGNATURE_INVALID', `The signature does not sign this challenge for this address: ${message}`, { reason: problem })
}

async function signInRequest(body: unknown): Promise<Checked<SignIn>> {
  const fields = fieldsOf(body, '{ "address", "nonce", "signature", "key" } (signature and key as signData answered them)')
  if (!fields.ok) return fields
  const { nonce, signature, key } = fields.value
  const address = signInAddress(fields.value.address, (await deploymentNetwork()).id)
  if (!address.ok) return address
  if (typeof nonce !== 'string' || !NONCE.test(nonce)) return refused(400, 'INVALID_NONCE', 'nonce must be the 64 hex characters POST /auth/challenge answered', 'nonce')
  if (!isHex(signature)) return refused(400, 'INVALID_SIGNATURE_FORMAT', 'signature must be the COSE_Sign1 in hex, as signData answered it', 'signature')
  if (!isHex(key)) return refused(400, 'INVALID_KEY_FORMAT', 'key must be the COSE_Key in hex, as signData answered it', 'key')
  return { ok: true, value: { address: address.value, nonce, signature, key } }
}

const isHex = (value: unknown): value is string => typeof value === 'string' && value.length % 2 === 0 && HEX.test(value)

interface OpenedSession {
  token: string
  expiresAt: string
}

/**
 * In one transaction: use the challenge (one INSERT unique on the nonce decides between concurrent
 * verifies, on any instance) and open the session. Undefined when the challenge was used already.
 */
async function signIn(challenge: Challenge): Promise<OpenedSession | undefined> {
  const now = new Date()
  if (!(await useChallenge(challenge, now.toISOString()))) return undefined
  const token = newSecret(SESSION_PREFIX)
  const expiresAt = new Date(now.getTime() + laneConfig().walletSessionMinutes * 60_000).toISOString()
  await INSERT.into(WalletSessions).entries({ ID: cds.utils.uuid(), tokenHash: hashSecret(token), address: challenge.address, createdAt: now.toISOString(), expiresAt })
  return { token, expiresAt }
}

/** Records the challenge as used; false when it was (ON CONFLICT DO NOTHING keeps the transaction usable on PostgreSQL). */
async function useChallenge(challenge: Challenge, now: string): Promise<boolean> {
  const { nonce, address, network, message, issuedAt, expiresAt } = challenge
  const recorded = await runWrite(
    `INSERT INTO ${tableOf(SignInChallenges)} (nonce, address, network, message, issuedAt, expiresAt, consumedAt) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [nonce, address, network, message, issuedAt, expiresAt, now],
  )
  return recorded === 1
}

// ---- the session's routes ------------------------------------------------------------------

interface Session {
  ID: string
  address: string
}

/** The open session the call presents in `Authorization: Bearer cgs_…`, or undefined. */
async function sessionOf(call: OwnCall): Promise<Session | undefined> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(call.headers.authorization ?? '')
  if (!match || prefixOf(match[1]) !== SESSION_PREFIX) return undefined
  const session = await cds.tx(() => SELECT.one.from(WalletSessions).columns('ID', 'address')
    .where({ tokenHash: hashSecret(match[1]), revokedAt: null, expiresAt: { '>': new Date().toISOString() } }))
  return session ? { ID: session.ID!, address: session.address! } : undefined
}

export async function walletKeys(call: OwnCall): Promise<Answer> {
  const session = await sessionOf(call)
  if (!session) return SESSION_INVALID
  return ok({ address: session.address, keys: await keysBoundTo(session.address) })
}

/** The keys bound to an address, newest first; never a secret. */
async function keysBoundTo(address: string) {
  const rows = await cds.tx(() => SELECT.from(ApiKeys)
    .columns('ID', 'hint', 'plan_name', 'unitsLeft', 'status', 'validUntil', 'createdAt', 'lastUsedAt', 'label')
    .where({ boundAddress: address })
    .orderBy('createdAt desc', 'ID desc'))
  // Units leased by instances and not yet drawn are still the key's.
  const leased = await undrawnLeased(rows.map(row => row.ID!))
  return rows.map(row => ({
    id: row.ID, hint: row.hint, plan: row.plan_name, unitsLeft: Number(row.unitsLeft) + (leased.get(row.ID!) ?? 0), status: row.status, validUntil: row.validUntil,
    createdAt: row.createdAt, lastUsedAt: row.lastUsedAt ?? null, label: row.label ?? null,
  }))
}

export async function walletRotateKey(call: OwnCall): Promise<Answer> {
  const target = await sessionKey(call)
  if (!target.ok) return target.answer
  const rotated = await rotateKey(target.value.ID)
  if (!rotated) return keyNotFound(target.value.ID)
  const key = await cds.tx(() => SELECT.one.from(ApiKeys).columns('plan_name', 'unitsLeft', 'validUntil', 'boundAddress').where({ ID: rotated.id }))
  return ok(deliverKey({
    id: rotated.id, key: rotated.key, plan: key?.plan_name ?? undefined, unitsLeft: Number(key?.unitsLeft), validUntil: key?.validUntil ?? undefined, boundAddress: key?.boundAddress,
  }))
}

export async function walletRevokeKey(call: OwnCall): Promise<Answer> {
  const target = await sessionKey(call)
  if (!target.ok) return target.answer
  if (!(await revokeKey(target.value.ID))) return keyNotFound(target.value.ID)
  return ok({ id: target.value.ID, status: ApiKey.status.revoked })
}

export async function walletSignOut(call: OwnCall): Promise<Answer> {
  const session = await sessionOf(call)
  if (!session) return SESSION_INVALID
  const ended = await cds.tx(() => UPDATE.entity(WalletSessions).set({ revokedAt: new Date().toISOString() }).where({ ID: session.ID, revokedAt: null }))
  return ended === 1 ? ok({ address: session.address, signedOut: true }) : SESSION_INVALID
}

/**
 * The key a session's call names in `{ id }`, when it is bound to the session's address. A key of
 * another address answers like one that does not exist. The binding never changes, so reading it
 * before rotating or revoking decides nothing that could change meanwhile.
 */
async function sessionKey(call: OwnCall): Promise<Checked<{ ID: string }>> {
  const session = await sessionOf(call)
  if (!session) return { ok: false, answer: SESSION_INVALID }
  const fields = fieldsOf(call.body, '{ "id": "<key id from GET /auth/keys>" }')
  if (!fields.ok) return fields
  const { id } = fields.value
  if (typeof id !== 'string' || !UUID.test(id)) return refused(400, 'INVALID_KEY_ID', 'id must be a key id (a UUID) from GET /auth/keys', 'id')
  const key = await cds.tx(() => SELECT.one.from(ApiKeys).columns('ID').where({ ID: id.toLowerCase(), boundAddress: session.address }))
  return key ? { ok: true, value: { ID: key.ID! } } : { ok: false, answer: keyNotFound(id) }
}

const keyNotFound = (id: string) => refusal(404, 'KEY_NOT_FOUND', `There is no active key ${id} bound to this wallet's address`, { target: 'id' })

// ---- input ---------------------------------------------------------------------------------

type Checked<T> = { ok: true; value: T } | { ok: false; answer: Answer }

function refused(status: number, code: string, message: string, target?: string): { ok: false; answer: Answer } {
  return { ok: false, answer: refusal(status, code, message, target ? { target } : {}) }
}

function fieldsOf(body: unknown, shape: string): Checked<Record<string, unknown>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return refused(400, 'INVALID_BODY', `The body must be a JSON object: ${shape}`)
  return { ok: true, value: body as Record<string, unknown> }
}

/**
 * An address that can sign in, in its canonical bech32 form: a Shelley base, enterprise or reward
 * address with a key credential (the one that signs), on the deployment's network.
 */
function signInAddress(value: unknown, networkId: number): Checked<string> {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : ''
  const address = text.length <= MAX_ADDRESS_LENGTH && ADDRESS_PREFIX.test(text) ? decodeAddress(text) : undefined
  const kind = address?.kind()
  if (!address || (kind !== CSL.AddressKind.Base && kind !== CSL.AddressKind.Enterprise && kind !== CSL.AddressKind.Reward)) {
    return refused(400, 'INVALID_ADDRESS', 'address must be a bech32 base, enterprise or stake address (addr…, addr_test…, stake…, stake_test…)', 'address')
  }
  if (addressNetworkId(address) !== networkId) {
    return refused(400, 'WRONG_NETWORK', `address is for ${addressNetworkId(address) === 1 ? 'mainnet' : 'a test network'}, but this gateway serves ${networkId === 1 ? 'mainnet' : 'a test network'}`, 'address')
  }
  const credential = kind === CSL.AddressKind.Reward ? CSL.RewardAddress.from_address(address)?.payment_cred() : address.payment_cred()
  if (!credential?.to_keyhash()) return refused(400, 'INVALID_ADDRESS', 'address is locked by a script, which cannot sign; use a wallet address with a key credential', 'address')
  return { ok: true, value: address.to_bech32() }
}
