import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { signDataWithWallet, SignerInputError } from '../../../devnet/chain-a/dev-signer.ts'
import { deriveWallet } from '../../../devnet/chain-a/genesis.ts'
import { verifyDataSignature, type DataSignatureCheck } from '../../../srv/chains/chain-a/signing/data-signature.ts'
import { coseKey, forgeSignData } from '../../support/cose.ts'

/**
 * The CIP-30 DataSignature verifier against the development signer (cardano-message-signing, as
 * wallets sign) and against forged and hostile signatures: every refusal names its reason and
 * nothing throws.
 */

const w1 = deriveWallet('data-signature-test', 'wallet:1', 'wallet-1')
const w2 = deriveWallet('data-signature-test', 'wallet:2', 'wallet-2')
const payload = Buffer.from(JSON.stringify({ domain: 'gateway.example', nonce: 'ab'.repeat(32), action: 'Sign in' }, null, 2), 'utf8')
const payloadHex = payload.toString('hex')

const addressBytes = (bech32: string) => CSL.Address.from_bech32(bech32).to_bytes()
const enterpriseOf = (key: CSL.PrivateKey, network = 0) => CSL.EnterpriseAddress.new(network, CSL.Credential.from_keyhash(key.to_public().hash())).to_address().to_bech32()
const mainnetBaseOf = (wallet: typeof w1) =>
  CSL.BaseAddress.new(1, CSL.Credential.from_keyhash(wallet.payment.to_public().hash()), CSL.Credential.from_keyhash(wallet.stake.to_public().hash())).to_address().to_bech32()

function refusal(check: DataSignatureCheck) {
  if (check.valid) throw new Error('the signature was accepted')
  return check.code
}

describe('accepts what a CIP-30 wallet answers', () => {
  it('for a base address: signed by the payment key', () => {
    const signed = signDataWithWallet(w1.address, payloadHex, w1)
    expect(verifyDataSignature({ address: w1.address, ...signed, payload }))
      .toEqual({ valid: true, signerKeyHash: w1.payment.to_public().hash().to_hex(), credential: 'payment' })
  })

  it('for a reward (stake) address: signed by the stake key', () => {
    const signed = signDataWithWallet(w1.stakeAddress, payloadHex, w1)
    expect(verifyDataSignature({ address: w1.stakeAddress, ...signed, payload }))
      .toEqual({ valid: true, signerKeyHash: w1.stake.to_public().hash().to_hex(), credential: 'stake' })
  })

  it('for an enterprise address, and for an address given as hex bytes to the signer', () => {
    const enterprise = enterpriseOf(w1.payment)
    const signed = signDataWithWallet(Buffer.from(addressBytes(enterprise)).toString('hex'), payloadHex, w1)
    expect(verifyDataSignature({ address: enterprise, ...signed, payload }).valid).toBe(true)
  })

  it('wrapped in CBOR tag 18 (COSE_Sign1) or not', () => {
    const signed = signDataWithWallet(w1.address, payloadHex, w1)
    expect(signed.signature.startsWith('84')).toBe(true)
    expect(verifyDataSignature({ address: w1.address, signature: `d2${signed.signature}`, key: signed.key, payload }).valid).toBe(true)
  })

  it('with protected bytes as sent, even when not canonically encoded', () => {
    // { 1: -8, "address": bytes } with the label 1 in a two-byte head: the signature covers these bytes.
    const address = Buffer.from(addressBytes(w1.address))
    const protectedBytes = Buffer.concat([Buffer.from('a21801276761646472657373', 'hex'), head(2, address.length), address])
    const sigStructure = Buffer.concat([Buffer.from('846a5369676e617475726531', 'hex'), bstr(protectedBytes), Buffer.from('40', 'hex'), bstr(payload)])
    const signature = Buffer.from(w1.payment.sign(sigStructure).to_bytes())
    const sign1 = Buffer.concat([Buffer.from('84', 'hex'), bstr(protectedBytes), Buffer.from('a0', 'hex'), bstr(payload), bstr(signature)])
    const key = coseKey({ x: w1.payment.to_public().as_bytes() })
    expect(verifyDataSignature({ address: w1.address, signature: sign1.toString('hex'), key, payload }).valid).toBe(true)
  })
})

describe('refuses', () => {
  const signed = signDataWithWallet(w1.address, payloadHex, w1)
  const check = (overrides: Partial<Parameters<typeof verifyDataSignature>[0]>) => refusal(verifyDataSignature({ address: w1.address, ...signed, payload, ...overrides }))

  it('another payload than the one asked for', () => {
    expect(check({ payload: Buffer.concat([payload, Buffer.from(' ')]) })).toBe('PAYLOAD_MISMATCH')
    const other = signDataWithWallet(w1.address, Buffer.from('another message').toString('hex'), w1)
    expect(check(other)).toBe('PAYLOAD_MISMATCH')
  })

  it('a tampered signature', () => {
    const tampered = signed.signature.slice(0, -2) + (signed.signature.endsWith('00') ? '01' : '00')
    expect(check({ signature: tampered })).toBe('SIGNATURE_MISMATCH')
  })

  it('a tampered protected header (a header added after signing)', () => {
    const sign1 = Buffer.from(signed.signature, 'hex')
    // 84 58 46 a2 …: one more entry (4 / kid: h'01') in the protected map, its byte string two bytes longer.
    const protectedLength = sign1[2]
    const protectedMap = Buffer.concat([Buffer.from('a3', 'hex'), sign1.subarray(4, 3 + protectedLength), Buffer.from('0441', 'hex'), Buffer.from('01', 'hex')])
    const tampered = Buffer.concat([Buffer.from('84', 'hex'), bstr(protectedMap), sign1.subarray(3 + protectedLength)])
    expect(check({ signature: tampered.toString('hex') })).toBe('SIGNATURE_MISMATCH')
  })

  it('a signature for another address (the protected address header), also the same keys on another network', () => {
    expect(refusal(verifyDataSignature({ address: w2.address, ...signed, payload }))).toBe('ADDRESS_MISMATCH')
    const mainnet = forgeSignData({ addressBytes: addressBytes(mainnetBaseOf(w1)), payload, signer: w1.payment })
    expect(check(mainnet)).toBe('ADDRESS_MISMATCH')
  })

  it('another key than the address\'s, signing for it', () => {
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w2.payment }))).toBe('KEY_NOT_OF_ADDRESS')
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w1.stake }))).toBe('KEY_NOT_OF_ADDRESS')
    expect(refusal(verifyDataSignature({ address: w1.stakeAddress, payload, ...forgeSignData({ addressBytes: addressBytes(w1.stakeAddress), payload, signer: w1.payment }) })))
      .toBe('KEY_NOT_OF_ADDRESS')
  })

  it('a COSE_Key of the address that did not sign', () => {
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w2.payment, keyOf: w1.payment }))).toBe('SIGNATURE_MISMATCH')
  })

  it('a script address: scripts cannot sign data', () => {
    const script = CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(w1.payment.to_public().hash()))
    const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(script.hash())).to_address().to_bech32()
    const forged = forgeSignData({ addressBytes: addressBytes(scriptAddress), payload, signer: w1.payment })
    expect(refusal(verifyDataSignature({ address: scriptAddress, ...forged, payload }))).toBe('SCRIPT_ADDRESS')
  })

  it('a hashed payload, and a detached one', () => {
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w1.payment, hashed: true }))).toBe('HASHED_PAYLOAD')
    expect(verifyDataSignature({ address: w1.address, payload, ...forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w1.payment, hashed: false }) }).valid).toBe(true)
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w1.payment, detached: true }))).toBe('DETACHED_PAYLOAD')
  })

  it('another algorithm, or none; no address header', () => {
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w1.payment, alg: -7 }))).toBe('UNSUPPORTED_ALGORITHM')
    expect(check(forgeSignData({ addressBytes: addressBytes(w1.address), payload, signer: w1.payment, alg: null }))).toBe('UNSUPPORTED_ALGORITHM')
    expect(check(forgeSignData({ payload, signer: w1.payment }))).toBe('ADDRESS_HEADER_MISSING')
  })

  it.each([
    ['key type EC2', { kty: 2 }],
    ['curve X25519', { crv: 4 }],
    ['no curve', { crv: null }],
    ['algorithm ES256', { alg: -7 }],
  ])('a COSE_Key with %s', (_name, fields) => {
    expect(check({ key: coseKey({ x: w1.payment.to_public().as_bytes(), ...fields }) })).toBe('UNSUPPORTED_KEY')
  })

  it('a COSE_Key without x or with an x of 31 bytes; one without alg is fine', () => {
    expect(check({ key: coseKey({ x: null }) })).toBe('UNSUPPORTED_KEY')
    expect(check({ key: coseKey({ x: w1.payment.to_public().as_bytes().subarray(1) }) })).toBe('UNSUPPORTED_KEY')
    expect(verifyDataSignature({ address: w1.address, signature: signed.signature, key: coseKey({ x: w1.payment.to_public().as_bytes(), alg: null }), payload }).valid).toBe(true)
  })

  it('a header label given twice', () => {
    const sign1 = Buffer.from(signed.signature, 'hex')
    const protectedLength = sign1[2]
    // The protected map with `1: -8` given again: which one counts would differ between verifiers.
    const protectedMap = Buffer.concat([Buffer.from('a3', 'hex'), sign1.subarray(4, 3 + protectedLength), Buffer.from('0127', 'hex')])
    const doubled = Buffer.concat([Buffer.from('84', 'hex'), bstr(protectedMap), sign1.subarray(3 + protectedLength)])
    expect(check({ signature: doubled.toString('hex') })).toBe('MALFORMED_SIGNATURE')
    expect(check({ key: signed.key.replace(/^a4/, 'a5') + '0101' })).toBe('MALFORMED_KEY')
  })

  it('a tag other than 18', () => {
    expect(check({ signature: `d862${signed.signature}` })).toBe('MALFORMED_SIGNATURE')
  })

  const garbage: [string, unknown][] = [
    ['null', null], ['a number', 42], ['an object', {}], ['an array', []], ['empty', ''], ['not hex', 'zz'], ['odd-length hex', 'abc'],
    ['not CBOR', 'ffff'], ['trailing bytes', '8400'], ['an array of 3', '83404040'], ['an array of 4 of the wrong types', '8401020304'],
    ['a protected header that is not a map', '8443010203a0404040'], ['an unprotected header that is not a map', '8440804040'],
    ['a byte string claiming 2^63 bytes', '845b7fffffffffffffff'], ['deep nesting', '81'.repeat(20_000) + '00'],
    ['more than 16 KiB', '84' + '00'.repeat(17 * 1024)],
  ]
  it.each(garbage)('as signature: %s, without throwing', (_name, signature) => {
    expect(check({ signature })).toBe('MALFORMED_SIGNATURE')
  })
  it.each(garbage)('as key: %s, without throwing', (_name, key) => {
    expect(check({ key })).toBe('MALFORMED_KEY')
  })

  it('a map where a COSE_Sign1 belongs, an empty COSE_Key', () => {
    expect(check({ signature: 'a0' })).toBe('MALFORMED_SIGNATURE')
    expect(check({ key: 'a0' })).toBe('UNSUPPORTED_KEY')
  })

  it('a claimed address that is none', () => {
    expect(check({ address: 'addr_test1qqqq' })).toBe('UNSUPPORTED_ADDRESS')
    expect(check({ address: '' })).toBe('UNSUPPORTED_ADDRESS')
  })
})

describe('the dev signer refuses', () => {
  it.each([
    ['a mainnet address', () => mainnetBaseOf(w1), /refusing to sign for a mainnet address/],
    ['another wallet\'s address', () => w2.address, /is not this wallet's: its payment credential is not the wallet's key \(CIP-30: AddressNotPK\)/],
    ['another wallet\'s stake address', () => w2.stakeAddress, /is not this wallet's: its stake credential/],
    ['something that is no address', () => 'addr_test1nothing', /is not an address in bech32 or hex/],
  ])('%s', (_name, address, message) => {
    expect(() => signDataWithWallet(address(), payloadHex, w1)).toThrow(SignerInputError)
    expect(() => signDataWithWallet(address(), payloadHex, w1)).toThrow(message)
  })

  it('a payload that is not hex', () => {
    expect(() => signDataWithWallet(w1.address, 'hello', w1)).toThrow(/--payload must be hex bytes/)
  })
})

/** A CBOR head: major type and length. */
function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length])
  if (length < 256) return Buffer.from([(major << 5) | 24, length])
  return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff])
}

const bstr = (bytes: Buffer) => Buffer.concat([head(2, bytes.length), bytes])
