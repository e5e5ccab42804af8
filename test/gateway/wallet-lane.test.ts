import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { bearer, freshClientAddress, ledgerOf, sendFrom, type SendFrom } from '../support/gateway.ts'
import { forgeSignData } from '../support/cose.ts'
import { signDataWithWallet } from '../../devnet/chain-a/dev-signer.ts'
import { chainA } from '../../srv/chains/chain-a/index.ts'
import { CHALLENGE_SECONDS, issueChallenge } from '../../srv/key-lanes/sign-in-challenge.ts'

/**
 * The wallet lane over HTTP: POST /auth/challenge, a CIP-30 signData by the development signer,
 * POST /auth/verify; the first sign-in of an address gets the free key once, every sign-in a
 * session that lists, rotates and revokes the keys bound to its address, and nothing else.
 *
 * Wallets are made fresh for each test (any Ed25519 keys make a devnet address; here every address
 * qualifies for free units: wallet-free-units.test.ts tests who does), and each test sends from a
 * loopback address of its own (127.0.0.N), so the failure limit of one test never reaches another.
 */
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_AUTH_FAILURES = '6'
process.env.GATEWAY_WALLET_FREE_UNITS = '250'
process.env.GATEWAY_WALLET_FREE_MIN_LOVELACE = '0'
process.env.GATEWAY_PUBLIC_URL = 'https://gateway.example:8443'
const app = cds.test(__dirname + '/../..') as ReturnType<typeof cds.test> & { url: string }
app.defaults.validateStatus = () => true

const ENV = ['GATEWAY_ENABLED', 'GATEWAY_AUTH_FAILURES', 'GATEWAY_WALLET_FREE_UNITS', 'GATEWAY_WALLET_FREE_MIN_LOVELACE', 'GATEWAY_PUBLIC_URL']
afterAll(() => {
  for (const name of ENV) delete process.env[name]
})

interface Wallet {
  payment: CSL.PrivateKey
  stake: CSL.PrivateKey
  address: string
  stakeAddress: string
}

const credential = (key: CSL.PrivateKey) => CSL.Credential.from_keyhash(key.to_public().hash())

function freshWallet(network = 0): Wallet {
  const payment = CSL.PrivateKey.generate_ed25519()
  const stake = CSL.PrivateKey.generate_ed25519()
  return {
    payment, stake,
    address: CSL.BaseAddress.new(network, credential(payment), credential(stake)).to_address().to_bech32(),
    stakeAddress: CSL.RewardAddress.new(network, credential(stake)).to_address().to_bech32(),
  }
}

const freshClient = freshClientAddress
const send = (method: 'GET' | 'POST', path: string, options: SendFrom) => sendFrom(app.url, method, path, options)
const post = (path: string, options: SendFrom) => send('POST', path, options)

async function challenge(address: string, from: string) {
  const reply = await post('/auth/challenge', { from, body: { address } })
  expect(reply.body.error).toBeUndefined()
  expect(reply.status).toBe(200)
  return reply.body as { address: string; network: string; nonce: string; message: string; payloadHex: string; issuedAt: string; expiresAt: string }
}

/** A whole sign-in: challenge, signData by the development signer, verify. */
async function signIn(wallet: Wallet, from: string, address = wallet.address) {
  const issued = await challenge(address, from)
  return post('/auth/verify', { from, body: { address, nonce: issued.nonce, ...signDataWithWallet(address, issued.payloadHex, wallet) } })
}

async function signedIn(wallet: Wallet, from: string, address = wallet.address) {
  const reply = await signIn(wallet, from, address)
  expect(reply.body.error).toBeUndefined()
  expect(reply.status).toBe(200)
  return reply.body
}

const rows = (entity: string, where: object) => cds.tx(() => SELECT.from(cds.entities('gateway')[entity]).where(where))

describe('sign-in', () => {
  it('issues a one-time message with the configured domain and URI, the network, a nonce and a 5-minute expiry', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const reply = await post('/auth/challenge', { from, body: { address: wallet.address }, headers: { host: 'attacker.example' } })
    expect(reply.status).toBe(200)
    const { network, nonce, message, payloadHex, issuedAt, expiresAt } = reply.body
    expect(network).toBe(`cardano:${(await chainA()).networkName}`)
    expect(nonce).toMatch(/^[0-9a-f]{64}$/)
    expect(Date.parse(expiresAt) - Date.parse(issuedAt)).toBe(300_000)
    expect(JSON.parse(message)).toEqual({
      domain: 'gateway.example:8443', uri: 'https://gateway.example:8443/auth/verify', statement: 'Sign in to the Chain-Access Gateway. No transaction, no fee.',
      address: wallet.address, network, nonce, issuedAt, expirationTime: expiresAt, action: 'Sign in',
    })
    expect(Buffer.from(payloadHex, 'hex').toString('utf8')).toBe(message)
    expect((await challenge(wallet.address, from)).nonce).not.toBe(nonce)
  })

  it('the first sign-in of an address gets the free key, once, with a session and the client configuration', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const first = await signedIn(wallet, from)
    expect(first).toMatchObject({
      key: expect.stringMatching(/^cag_/), plan: 'trial', unitsLeft: 250, boundAddress: wallet.address, address: wallet.address,
      session: { token: expect.stringMatching(/^cgs_/), expiresAt: expect.any(String) }, freeUnits: { units: 250 },
      configuration: { mcpServers: { 'chain-a': expect.any(Object), 'chain-b': expect.any(Object) } }, curl: expect.stringContaining(first.key),
    })
    expect(Date.parse(first.session.expiresAt) - Date.now()).toBeGreaterThan(29 * 60_000)
    const me = await app.GET('/me', bearer(first.key))
    expect(me.data).toMatchObject({ id: first.id, plan: 'trial', unitsLeft: 250, boundAddress: wallet.address, label: 'wallet sign-in' })
    expect((await ledgerOf(first.id)).map(entry => [entry.kind, entry.units, entry.note, entry.reference]))
      .toEqual([['credit', 250, 'wallet sign-in: free calls', `wallet:${wallet.address}`]])

    const second = await signedIn(wallet, from)
    expect(second.key).toBeUndefined()
    expect(second.session.token).not.toBe(first.session.token)
    expect(second.keys).toEqual([expect.objectContaining({ id: first.id, plan: 'trial', unitsLeft: 250, status: 'active', label: 'wallet sign-in' })])
    expect(second.freeUnits).toMatchObject({ units: 0, code: 'FREE_UNITS_ALREADY_GIVEN' })
    expect(JSON.stringify(second)).not.toContain(first.key)
    expect(await rows('WalletAccounts', { address: wallet.address })).toEqual([expect.objectContaining({ firstKey_ID: first.id })])
  })

  it('with the stake address: the stake key signs, and the stake address is an identity of its own (its wallet\'s free units given to it)', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const byStake = await signedIn(wallet, from, wallet.stakeAddress)
    expect(byStake).toMatchObject({ address: wallet.stakeAddress, boundAddress: wallet.stakeAddress, key: expect.stringMatching(/^cag_/) })
    const keys = await send('GET', '/auth/keys', { from, token: byStake.session.token })
    expect(keys.body.keys.map((key: any) => key.id)).toEqual([byStake.id])
    const byBase = await signedIn(wallet, from)
    expect(byBase).toMatchObject({ address: wallet.address, keys: [], freeUnits: { units: 0, code: 'FREE_UNITS_ALREADY_GIVEN' } })
  })

  it('an address given its key before free units were recorded per credential gets none again, nor do its keys\' other addresses', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const { WalletAccounts } = cds.entities('gateway')
    await cds.tx(() => INSERT.into(WalletAccounts).entries({ address: wallet.address, createdAt: new Date().toISOString() }))
    for (const address of [wallet.address, wallet.stakeAddress]) {
      const reply = await signedIn(wallet, from, address)
      expect(reply).toMatchObject({ address, keys: [], freeUnits: { units: 0, code: 'FREE_UNITS_ALREADY_GIVEN' } })
    }
  })

  it('two sign-ins of a new address at once (two nonces): both get a session, one gets the key', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const [a, b] = await Promise.all([signedIn(wallet, from), signedIn(wallet, from)])
    expect([a, b].filter(reply => reply.key)).toHaveLength(1)
    expect(await rows('ApiKeys', { boundAddress: wallet.address })).toHaveLength(1)
  })

  it('five verifies of one nonce at once: exactly one wins', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const issued = await challenge(wallet.address, from)
    const body = { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet) }
    const replies = await Promise.all(Array.from({ length: 5 }, () => post('/auth/verify', { from, body })))
    expect(replies.map(reply => reply.body.error?.code ?? 'OK').sort()).toEqual(['CHALLENGE_INVALID', 'CHALLENGE_INVALID', 'CHALLENGE_INVALID', 'CHALLENGE_INVALID', 'OK'])
    expect(replies.map(reply => reply.status).sort()).toEqual([200, 401, 401, 401, 401])
    expect(await rows('WalletSessions', { address: wallet.address })).toHaveLength(1)
    expect(await rows('ApiKeys', { boundAddress: wallet.address })).toHaveLength(1)
  })
})

describe('refuses a sign-in', () => {
  const invalidChallenge = { code: 'CHALLENGE_INVALID', message: expect.stringMatching(/unknown, expired or already used/) }

  it('for an address of another network, or one that cannot sign', async () => {
    const from = freshClient()
    const mainnet = await post('/auth/challenge', { from, body: { address: freshWallet(1).address } })
    expect(mainnet.body.error).toMatchObject({ code: 'WRONG_NETWORK', target: 'address' })
    expect(mainnet.status).toBe(400)

    const wallet = freshWallet()
    const script = CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(wallet.payment.to_public().hash()))
    const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(script.hash())).to_address().to_bech32()
    const pointer = CSL.PointerAddress.new(0, credential(wallet.payment), CSL.Pointer.new_pointer(CSL.BigNum.from_str('1'), CSL.BigNum.from_str('2'), CSL.BigNum.from_str('3'))).to_address().to_bech32()
    const byron = 'Ae2tdPwUPEZFRbyhz3cpfC2CumGzNkFBN2L42rcUc2yjQpEkxDbkPodpMAi'
    for (const address of [scriptAddress, pointer, byron, 'addr_test1xyz', `${wallet.address}x`]) {
      const reply = await post('/auth/challenge', { from, body: { address } })
      expect([reply.status, reply.body.error?.code]).toEqual([400, 'INVALID_ADDRESS'])
    }
  })

  it('with an expired nonce', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const { network } = await challenge(wallet.address, from)
    const expired = issueChallenge(wallet.address, network, Date.now() - CHALLENGE_SECONDS * 1000 - 1000)
    const payloadHex = Buffer.from(expired.message, 'utf8').toString('hex')
    const reply = await post('/auth/verify', { from, body: { address: wallet.address, nonce: expired.nonce, ...signDataWithWallet(wallet.address, payloadHex, wallet) } })
    expect(reply.body.error).toMatchObject(invalidChallenge)
    expect(reply.status).toBe(401)
  })

  it('with a nonce used already, unknown, or issued for another address', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const other = freshWallet()
    const issued = await challenge(wallet.address, from)
    const body = { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet) }
    expect((await post('/auth/verify', { from, body })).status).toBe(200)
    const again = await post('/auth/verify', { from, body })
    expect(again.body.error).toMatchObject(invalidChallenge)
    expect(again.status).toBe(401)

    const unknown = await post('/auth/verify', { from, body: { ...body, nonce: 'ab'.repeat(32) } })
    expect([unknown.status, unknown.body.error?.code]).toEqual([401, 'CHALLENGE_INVALID'])

    const forOther = await challenge(other.address, from)
    const stolen = await post('/auth/verify', { from, body: { address: wallet.address, nonce: forOther.nonce, ...signDataWithWallet(wallet.address, forOther.payloadHex, wallet) } })
    expect([stolen.status, stolen.body.error?.code]).toEqual([401, 'CHALLENGE_INVALID'])
  })

  it('signed by another key, or for another address', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const thief = freshWallet()
    const issued = await challenge(wallet.address, from)
    const payload = Buffer.from(issued.payloadHex, 'hex')
    const addressBytes = CSL.Address.from_bech32(wallet.address).to_bytes()

    const byOtherKey = await post('/auth/verify', { from, body: { address: wallet.address, nonce: issued.nonce, ...forgeSignData({ addressBytes, payload, signer: thief.payment }) } })
    expect(byOtherKey.body.error).toMatchObject({ code: 'SIGNATURE_INVALID', reason: 'KEY_NOT_OF_ADDRESS' })
    expect(byOtherKey.status).toBe(401)

    const forOtherAddress = await post('/auth/verify', { from, body: { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(thief.address, issued.payloadHex, thief) } })
    expect(forOtherAddress.body.error).toMatchObject({ code: 'SIGNATURE_INVALID', reason: 'ADDRESS_MISMATCH' })

    // The failed attempts did not use up the challenge: the wallet itself still signs in with it.
    const own = await post('/auth/verify', { from, body: { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet) } })
    expect(own.status).toBe(200)
  })

  it('whose payload is not the message issued', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const issued = await challenge(wallet.address, from)
    const altered = Buffer.from(issued.message.replace('gateway.example', 'attacker.example'), 'utf8').toString('hex')
    const reply = await post('/auth/verify', { from, body: { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, altered, wallet) } })
    expect(reply.body.error).toMatchObject({ code: 'SIGNATURE_INVALID', reason: 'PAYLOAD_MISMATCH' })
    expect(reply.status).toBe(401)
  })

  it('after too many failed attempts from one client address (429 with Retry-After), never a valid one', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const issued = await challenge(wallet.address, from)
    const bad = { address: wallet.address, nonce: issued.nonce, ...forgeSignData({ addressBytes: CSL.Address.from_bech32(wallet.address).to_bytes(), payload: Buffer.from('x'), signer: wallet.payment }) }
    for (let i = 0; i < 6; i++) expect((await post('/auth/verify', { from, body: bad })).status).toBe(401)
    const limited = await post('/auth/verify', { from, body: bad })
    expect(limited.body.error.code).toBe('TOO_MANY_FAILED_ATTEMPTS')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)

    const other = await post('/auth/verify', { from: freshClient(), body: bad })
    expect(other.body.error.code).toBe('SIGNATURE_INVALID')
    const valid = await post('/auth/verify', { from, body: { ...bad, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet) } })
    expect(valid.body.error).toBeUndefined()
    expect(valid.status).toBe(200)
  })
})

describe('a session', () => {
  it('lists, rotates and revokes the keys of its own address only', async () => {
    const from = freshClient()
    const alice = freshWallet()
    const bob = freshWallet()
    const a = await signedIn(alice, from)
    const b = await signedIn(bob, from)

    const aliceKeys = await send('GET', '/auth/keys', { from, token: a.session.token })
    expect(aliceKeys.status).toBe(200)
    expect(aliceKeys.body).toEqual({
      address: alice.address,
      keys: [{ id: a.id, hint: a.key.slice(0, 12), plan: 'trial', unitsLeft: 250, status: 'active', validUntil: a.validUntil, createdAt: expect.any(String), lastUsedAt: null, label: 'wallet sign-in' }],
    })

    for (const path of ['/auth/keys/rotate', '/auth/keys/revoke']) {
      const reply = await post(path, { from, token: a.session.token, body: { id: b.id } })
      expect(reply.body.error).toMatchObject({ code: 'KEY_NOT_FOUND' })
      expect(reply.status).toBe(404)
    }
    expect((await app.GET('/me', bearer(b.key))).status).toBe(200)

    const rotated = await post('/auth/keys/rotate', { from, token: a.session.token, body: { id: a.id } })
    expect(rotated.body).toMatchObject({ id: a.id, key: expect.stringMatching(/^cag_/), plan: 'trial', unitsLeft: 250, boundAddress: alice.address, configuration: { mcpServers: expect.any(Object) } })
    expect(rotated.body.key).not.toBe(a.key)
    expect((await app.GET('/me', bearer(a.key))).status).toBe(401)
    expect((await app.GET('/me', bearer(rotated.body.key))).data.unitsLeft).toBe(250)

    const revoked = await post('/auth/keys/revoke', { from, token: a.session.token, body: { id: a.id } })
    expect(revoked.body).toEqual({ id: a.id, status: 'revoked' })
    expect((await app.GET('/me', bearer(rotated.body.key))).status).toBe(401)
    const again = await post('/auth/keys/revoke', { from, token: a.session.token, body: { id: a.id } })
    expect([again.status, again.body.error?.code]).toEqual([404, 'KEY_NOT_FOUND'])
  })

  it('is refused when missing, made up, an API key, expired or signed out', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const first = await signedIn(wallet, from)
    const second = await signedIn(wallet, from)
    const refusedWith = async (token?: string) => {
      const reply = await send('GET', '/auth/keys', { from, token })
      expect(reply.body.error?.code).toBe('SESSION_INVALID')
      expect(reply.status).toBe(401)
      expect(reply.headers['www-authenticate']).toMatch(/^Bearer /)
    }
    await refusedWith(undefined)
    await refusedWith('cgs_made-up')
    await refusedWith(first.key)

    const { WalletSessions } = cds.entities('gateway')
    const [expiring] = await cds.tx(() => SELECT.from(WalletSessions).where({ address: wallet.address }).orderBy('createdAt'))
    await cds.tx(() => UPDATE(WalletSessions).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }).where({ ID: expiring.ID }))
    await refusedWith(first.session.token)

    expect((await send('GET', '/auth/keys', { from, token: second.session.token })).status).toBe(200)
    const out = await post('/auth/sign-out', { from, token: second.session.token })
    expect(out.body).toEqual({ address: wallet.address, signedOut: true })
    await refusedWith(second.session.token)
    expect((await post('/auth/keys/rotate', { from, token: second.session.token, body: { id: first.id } })).status).toBe(401)
    expect((await post('/auth/sign-out', { from, token: second.session.token })).status).toBe(401)
  })
})

describe('bad input is 400 with a code, never 5xx', () => {
  const wrongTypes: [string, unknown][] = [['null', null], ['an array', []], ['an object', {}], ['a number', 42]]

  it.each(['null', '[]', '42', '"text"', ''])('body %s', async raw => {
    const from = freshClient()
    for (const path of ['/auth/challenge', '/auth/verify']) {
      const reply = await post(path, { from, raw })
      expect(reply.body.error?.code).toBe('INVALID_BODY')
      expect(reply.status).toBe(400)
    }
  })

  it('invalid JSON', async () => {
    const reply = await post('/auth/verify', { from: freshClient(), raw: '{"address":' })
    expect([reply.status, reply.body.error?.code]).toEqual([400, 'INVALID_JSON'])
  })

  it.each(wrongTypes)('challenge address as %s', async (_name, address) => {
    const reply = await post('/auth/challenge', { from: freshClient(), body: { address } })
    expect(reply.body.error).toMatchObject({ code: 'INVALID_ADDRESS', target: 'address' })
    expect(reply.status).toBe(400)
  })

  const verifyFields: [string, string][] = [['address', 'INVALID_ADDRESS'], ['nonce', 'INVALID_NONCE'], ['signature', 'INVALID_SIGNATURE_FORMAT'], ['key', 'INVALID_KEY_FORMAT']]
  describe.each(verifyFields)('verify %s', (field, code) => {
    it.each(wrongTypes)('as %s', async (_name, value) => {
      const from = freshClient()
      const wallet = freshWallet()
      const issued = await challenge(wallet.address, from)
      const body = { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet), [field]: value }
      const reply = await post('/auth/verify', { from, body })
      expect(reply.body.error).toMatchObject({ code })
      expect(reply.status).toBe(400)
    })
  })

  it('a signature or key that is hex but not COSE', async () => {
    const from = freshClient()
    const wallet = freshWallet()
    const issued = await challenge(wallet.address, from)
    const body = { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet) }
    for (const [field, value, code] of [['signature', 'ffff', 'INVALID_SIGNATURE_FORMAT'], ['key', '8400', 'INVALID_KEY_FORMAT'], ['signature', 'zz', 'INVALID_SIGNATURE_FORMAT']]) {
      const reply = await post('/auth/verify', { from, body: { ...body, [field]: value } })
      expect([reply.status, reply.body.error?.code]).toEqual([400, code])
    }
  })

  it.each([...wrongTypes, ['not a UUID', 'key-1']] as [string, unknown][])('key id as %s', async (_name, id) => {
    const from = freshClient()
    const { session } = await signedIn(freshWallet(), from)
    for (const path of ['/auth/keys/rotate', '/auth/keys/revoke']) {
      const reply = await post(path, { from, token: session.token, body: { id } })
      expect(reply.body.error).toMatchObject({ code: 'INVALID_KEY_ID', target: 'id' })
      expect(reply.status).toBe(400)
    }
    for (const raw of ['null', '[]', '7']) expect((await post('/auth/keys/rotate', { from, token: session.token, raw })).body.error.code).toBe('INVALID_BODY')
  })
})

test('a challenge is stored nowhere until it is used; then once, until a day after it expired', async () => {
  const from = freshClient()
  const wallet = freshWallet()
  const issued = await challenge(wallet.address, from)
  const recorded = () => rows('SignInChallenges', { nonce: issued.nonce })
  expect(await recorded()).toEqual([])
  const reply = await post('/auth/verify', { from, body: { address: wallet.address, nonce: issued.nonce, ...signDataWithWallet(wallet.address, issued.payloadHex, wallet) } })
  expect(reply.status).toBe(200)
  expect(await recorded()).toEqual([expect.objectContaining({ address: wallet.address, message: issued.message, expiresAt: issued.expiresAt })])
})
