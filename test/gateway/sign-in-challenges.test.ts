import { randomBytes } from 'node:crypto'
import { freshClientAddress, sendFrom } from '../support/gateway.ts'
import { freshWallet, PUBLIC_URL, signedChallenge, signIn, startGateways, type Gateways } from '../support/lane-gateways.ts'
import { startDevnet } from '../support/devnet.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { signDataWithWallet } from '../../devnet/chain-a/dev-signer.ts'
import { CHALLENGE_SECONDS, issueChallenge } from '../../srv/key-lanes/sign-in-challenge.ts'

/**
 * Sign-in challenges against gateway processes of their own (two instances on one database): a
 * challenge is stored nowhere until it is used, so no client can stop another's sign-in by asking
 * for many; the nonce carries a MAC under GATEWAY_LANE_SECRET, so any instance recognises the
 * challenges the deployment issued (and nothing else), and one INSERT unique on the nonce uses it once.
 */

const LANE_SECRET = 'sign-in challenge tests: a lane secret of 32 characters or more'
let devnet: ChainADevnet
let gateways: Gateways

beforeAll(async () => {
  devnet = await startDevnet()
  gateways = await startGateways(2, devnet, { GATEWAY_LANE_SECRET: LANE_SECRET })
}, 240_000)

afterAll(async () => {
  await gateways?.stop()
  await devnet?.stop()
}, 120_000)

const url = (i = 0) => gateways.servers[i % gateways.servers.length].url
const INVALID = { code: 'CHALLENGE_INVALID', message: expect.stringMatching(/unknown, expired or already used/) }

/** The test makes challenges the way the gateway does, under a secret of its choice (this process's setting). */
function challengeUnder(secret: string, address: string, issuedAt: number) {
  const saved = { secret: process.env.GATEWAY_LANE_SECRET, url: process.env.GATEWAY_PUBLIC_URL }
  Object.assign(process.env, { GATEWAY_LANE_SECRET: secret, GATEWAY_PUBLIC_URL: PUBLIC_URL })
  try {
    return issueChallenge(address, 'cardano:devnet', issuedAt)
  } finally {
    for (const [name, value] of [['GATEWAY_LANE_SECRET', saved.secret], ['GATEWAY_PUBLIC_URL', saved.url]] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

test('a client asking for challenges many times a second never stops another client\'s sign-in from the same address', async () => {
  const from = freshClientAddress()
  const busy = freshWallet()
  for (let round = 0; round < 4; round++) {
    const answers = await Promise.all(Array.from({ length: 40 }, () => sendFrom(url(), 'POST', '/auth/challenge', { from, body: { address: busy.address } })))
    expect(answers.map(answer => answer.status)).toEqual(answers.map(() => 200))
  }
  const other = freshWallet()
  const signedIn = await signIn(url(), from, other)
  expect(signedIn.body.error).toBeUndefined()
  expect(signedIn.body).toMatchObject({ address: other.address, session: { token: expect.stringMatching(/^cgs_/) } })
  expect(signedIn.status).toBe(200)
})

test('a challenge issued by one instance signs in at the other, once: of four verifies at both instances at once, one wins', async () => {
  const from = freshClientAddress()
  const wallet = freshWallet()
  const body = await signedChallenge(url(0), from, wallet, wallet.address)
  const answers = await Promise.all([1, 0, 1, 0].map(i => sendFrom(url(i), 'POST', '/auth/verify', { from, body })))
  expect(answers.map(answer => answer.body.error?.code ?? 'OK').sort()).toEqual(['CHALLENGE_INVALID', 'CHALLENGE_INVALID', 'CHALLENGE_INVALID', 'OK'])
  expect(answers.map(answer => answer.status).sort()).toEqual([200, 401, 401, 401])
})

test('a challenge is the gateway\'s, for its address and five minutes: made up, altered, another address\'s or expired, it is refused', async () => {
  const from = freshClientAddress()
  const wallet = freshWallet()
  const verify = (challenge: { nonce: string; message: string }, address = wallet.address) =>
    sendFrom(url(1), 'POST', '/auth/verify', { from, body: { address, nonce: challenge.nonce, ...signDataWithWallet(address, Buffer.from(challenge.message).toString('hex'), wallet) } })
  const now = Date.now()

  const underAnotherSecret = challengeUnder('not the gateway\'s lane secret, though long enough', wallet.address, now)
  const expired = challengeUnder(LANE_SECRET, wallet.address, now - CHALLENGE_SECONDS * 1000 - 1000)
  const issued = challengeUnder(LANE_SECRET, wallet.address, now)
  const altered = { ...issued, nonce: issued.nonce.slice(0, 12) + randomBytes(10).toString('hex') + issued.nonce.slice(32) }
  const forAnother = challengeUnder(LANE_SECRET, freshWallet().address, now)
  for (const challenge of [underAnotherSecret, expired, altered, forAnother]) {
    const answer = await verify(challenge)
    expect(answer.body.error).toMatchObject(INVALID)
    expect(answer.status).toBe(401)
  }

  // The same making under the gateway's secret, fresh and for this address, is a challenge of the gateway.
  const valid = await verify(issued)
  expect(valid.body.error).toBeUndefined()
  expect(valid.status).toBe(200)
})
