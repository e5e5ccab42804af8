import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../../devnet/chain-a/index.ts'
import { mergeSignerAnswer, signerAnswerKind } from '../../../srv/chains/chain-a/signing/witnesses.ts'
import { signaturePolicy, startDevnet } from '../../support/devnet.ts'
import { bodyHash, errorCode, keyHashOf, submitHex, unsignedTransfer } from './support.ts'
import { witnessSetOf, signWith } from '../../support/sign.ts'

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair

beforeAll(async () => {
  devnet = await startDevnet()
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
})
afterAll(() => devnet.stop())
afterEach(() => devnet.produceBlock())

const rawBody = (hex: string) => Buffer.from(CSL.FixedTransaction.from_hex(hex).raw_body())

describe('merging a signer answer into the unsigned transaction', () => {
  test('a CIP-30 witness set merges into the original body, and the devnet accepts the result', () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const answer = witnessSetOf(unsigned.hex, w1.payment)
    expect(signerAnswerKind(answer)).toBe('witness-set')

    const signed = mergeSignerAnswer(unsigned.hex, answer)
    expect(signed).toMatchObject({ answerKind: 'witness-set', addedWitnesses: 1, vkeyWitnessCount: 1, txHash: unsigned.bodyHash, bodyHash: unsigned.bodyHash })
    expect(rawBody(signed.cborHex).equals(rawBody(unsigned.hex))).toBe(true)
    expect(submitHex(devnet, signed.cborHex)).toBe(unsigned.bodyHash)
  })

  test('the body bytes are never re-serialised, even when CSL would encode them differently', () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    // The fee (400000) again, as a valid but non-minimal 8-byte integer: a re-encoding would shorten it.
    const minimalFee = '021a00061a80'
    expect(unsigned.hex.split(minimalFee)).toHaveLength(2)
    const odd = unsigned.hex.replace(minimalFee, '021b000000000006' + '1a80')
    const reserialised = Buffer.from(CSL.Transaction.from_hex(odd).body().to_bytes())
    expect(reserialised.equals(rawBody(odd))).toBe(false)

    const signed = mergeSignerAnswer(odd, witnessSetOf(odd, w1.payment))
    expect(signed.txHash).toBe(bodyHash(odd))
    expect(rawBody(signed.cborHex).equals(rawBody(odd))).toBe(true)
    expect(submitHex(devnet, signed.cborHex)).toBe(bodyHash(odd))
  })

  test('the unsigned transaction\'s script witnesses are kept byte for byte', () => {
    const policy = signaturePolicy(w1.payment)
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, undefined, { mint: [{ policy, name: 'SIGNED', quantity: 10n }] })
    const signed = mergeSignerAnswer(unsigned.hex, witnessSetOf(unsigned.hex, w1.payment))

    const witnesses = CSL.FixedTransaction.from_hex(signed.cborHex).witness_set()
    expect(witnesses.native_scripts()?.len()).toBe(1)
    expect(witnesses.native_scripts()!.get(0).to_hex()).toBe(policy.to_hex())
    expect(witnesses.vkeys()?.len()).toBe(1)
    expect(submitHex(devnet, signed.cborHex)).toBe(unsigned.bodyHash)
  })

  test('a whole signed transaction with the same body gives the same result as its witness set', () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const whole = signWith(unsigned.hex, w1.payment)
    expect(signerAnswerKind(whole)).toBe('transaction')

    const fromWhole = mergeSignerAnswer(unsigned.hex, whole)
    expect(fromWhole.answerKind).toBe('transaction')
    expect(fromWhole.cborHex).toBe(mergeSignerAnswer(unsigned.hex, witnessSetOf(unsigned.hex, w1.payment)).cborHex)
    expect(submitHex(devnet, fromWhole.cborHex)).toBe(unsigned.bodyHash)
  })

  test('signers add up: a second answer merges into the first, and a repeated witness is not added twice', () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, undefined, { requiredSigners: [keyHashOf(w2.payment)] })
    const first = mergeSignerAnswer(unsigned.hex, witnessSetOf(unsigned.hex, w1.payment))
    expect(() => submitHex(devnet, first.cborHex)).toThrow(/MissingVKeyWitnessesUTXOW/)

    const both = mergeSignerAnswer(first.cborHex, witnessSetOf(unsigned.hex, w2.payment))
    expect(both).toMatchObject({ addedWitnesses: 1, vkeyWitnessCount: 2, txHash: unsigned.bodyHash })
    expect(mergeSignerAnswer(both.cborHex, witnessSetOf(unsigned.hex, w2.payment))).toMatchObject({ addedWitnesses: 0, vkeyWitnessCount: 2 })
    expect(submitHex(devnet, both.cborHex)).toBe(unsigned.bodyHash)
  })

  test('a whole transaction with another body is refused with WITNESS_BODY_MISMATCH', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, 5_000_000n)
    const other = unsignedTransfer(devnet, w1.address, w2.address, 6_000_000n)
    expect(await errorCode(() => mergeSignerAnswer(unsigned.hex, signWith(other.hex, w1.payment)))).toBe('WITNESS_BODY_MISMATCH')
  })
})

describe('unusable input', () => {
  let unsigned: string
  let answer: string
  beforeAll(() => {
    unsigned = unsignedTransfer(devnet, w1.address, w2.address).hex
    answer = witnessSetOf(unsigned, w1.payment)
  })

  test.each([
    ['not hex', 'not-hex'],
    ['empty', ''],
    ['odd length', 'a10'],
    ['truncated', () => answer.slice(0, -2)],
    ['followed by extra bytes', () => answer + '00'],
    ['a reserved initial byte', 'fc'],
    ['a map with a key but no value', 'bf01ff'],
    ['nested too deeply', '81'.repeat(300) + '00'],
  ])('a signer answer that is %s is MALFORMED_CBOR', async (_, input) => {
    const hex = typeof input === 'function' ? input() : input
    expect(await errorCode(() => mergeSignerAnswer(unsigned, hex))).toBe('MALFORMED_CBOR')
  })

  test.each([
    ['an integer', '1864'],
    ['a text string', '6474657874'],
    ['a map with an unknown witness kind', 'a1186301'],
    ['an array that is not a transaction', '83010203'],
  ])('a well-formed answer that is %s is MALFORMED_WITNESS_SET', async (_, hex) => {
    expect(await errorCode(() => mergeSignerAnswer(unsigned, hex))).toBe('MALFORMED_WITNESS_SET')
  })

  test('a malformed unsigned transaction is MALFORMED_CBOR', async () => {
    expect(await errorCode(() => mergeSignerAnswer(unsigned.slice(0, -4), answer))).toBe('MALFORMED_CBOR')
    expect(await errorCode(() => mergeSignerAnswer(answer, answer))).toBe('MALFORMED_CBOR')
  })
})
