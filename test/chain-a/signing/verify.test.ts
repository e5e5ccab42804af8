import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../../devnet/chain-a/index.ts'
import { verifySignedTransaction } from '../../../srv/chains/chain-a/signing/verify.ts'
import { mergeSignerAnswer } from '../../../srv/chains/chain-a/signing/witnesses.ts'
import { signaturePolicy, startDevnet } from '../../support/devnet.ts'
import { errorCode, keyHashOf, submitHex, unsignedTransfer, type Unsigned } from './support.ts'
import { witnessSetOf } from '../../support/sign.ts'

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

const signedBy = (unsigned: Unsigned, ...keys: CSL.PrivateKey[]) => mergeSignerAnswer(unsigned.hex, witnessSetOf(unsigned.hex, ...keys)).cborHex
const verify = (unsigned: Unsigned, signedHex: string) => verifySignedTransaction(signedHex, { expectedBodyHash: unsigned.bodyHash, inputOwners: unsigned.owners })
const stakeKeyHash = (wallet: WalletKeyPair) => keyHashOf(wallet.stake)

describe('a correctly signed transaction', () => {
  test('is valid, with its signers listed, and the devnet agrees', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const signed = signedBy(unsigned, w1.payment)
    expect(await verify(unsigned, signed)).toEqual({
      valid: true, txHash: unsigned.bodyHash, bodyHash: unsigned.bodyHash, witnessCount: 1,
      signerKeyHashes: [keyHashOf(w1.payment)], missingSigners: [], invalidSignatures: [], problems: [],
    })
    expect(submitHex(devnet, signed)).toBe(unsigned.bodyHash)
  })

  test('input owners may come from an asynchronous resolver, as addresses or payment key hashes', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const signed = signedBy(unsigned, w1.payment)
    const asked: string[] = []
    const result = await verifySignedTransaction(signed, {
      expectedBodyHash: unsigned.bodyHash,
      inputOwners: async ref => { asked.push(ref); return keyHashOf(w1.payment) },
    })
    expect(result.valid).toBe(true)
    expect(asked).toEqual(unsigned.inputs.map(input => input.ref))
  })
})

describe('what makes a signed transaction invalid', () => {
  test('a missing required signer is listed, and the devnet refuses the transaction too', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, undefined, { requiredSigners: [keyHashOf(w2.payment)] })
    const onlyPayer = signedBy(unsigned, w1.payment)
    const result = await verify(unsigned, onlyPayer)
    expect(result).toMatchObject({ valid: false, signerKeyHashes: [keyHashOf(w1.payment)], invalidSignatures: [], problems: [] })
    expect(result.missingSigners).toEqual([{ keyHash: keyHashOf(w2.payment), neededFor: 'required signer' }])
    expect(() => submitHex(devnet, onlyPayer)).toThrow(/MissingVKeyWitnessesUTXOW/)

    expect((await verify(unsigned, signedBy(unsigned, w1.payment, w2.payment))).valid).toBe(true)
  })

  test('a signature over another body is a bad signature, and the payer counts as missing', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, 5_000_000n)
    const other = unsignedTransfer(devnet, w1.address, w2.address, 7_000_000n)
    const signed = mergeSignerAnswer(unsigned.hex, witnessSetOf(other.hex, w1.payment)).cborHex
    const result = await verify(unsigned, signed)
    expect(result).toMatchObject({ valid: false, witnessCount: 1, signerKeyHashes: [], invalidSignatures: [keyHashOf(w1.payment)] })
    expect(result.missingSigners).toEqual([{ keyHash: keyHashOf(w1.payment), neededFor: `input ${unsigned.inputs[0].ref}` }])
    expect(() => submitHex(devnet, signed)).toThrow(/InvalidWitnessesUTXOW/)
  })

  test('a corrupted signature is a bad signature', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const hash = CSL.FixedTransaction.from_hex(unsigned.hex).transaction_hash()
    const good = CSL.make_vkey_witness(hash, w1.payment)
    const bytes = Buffer.from(good.signature().to_bytes())
    bytes[10] ^= 0x01
    const witnesses = CSL.TransactionWitnessSet.new()
    const vkeys = CSL.Vkeywitnesses.new()
    vkeys.add(CSL.Vkeywitness.new(good.vkey(), CSL.Ed25519Signature.from_bytes(bytes)))
    witnesses.set_vkeys(vkeys)
    const result = await verify(unsigned, mergeSignerAnswer(unsigned.hex, witnesses.to_hex()).cborHex)
    expect(result).toMatchObject({ valid: false, invalidSignatures: [keyHashOf(w1.payment)] })
  })

  test('stake credentials of withdrawals and certificates must sign', async () => {
    const pool = [...devnet.ledger.pools.keys()][0]
    const delegation = CSL.Certificate.new_stake_delegation(CSL.StakeDelegation.new(
      CSL.Credential.from_keyhash(w1.stake.to_public().hash()), CSL.Ed25519KeyHash.from_hex(pool)))
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, undefined, {
      certificates: [delegation],
      withdrawals: [{ stakeAddress: w2.stakeAddress, amount: 0n }],
    })
    const result = await verify(unsigned, signedBy(unsigned, w1.payment))
    expect(result.valid).toBe(false)
    expect(result.missingSigners).toEqual([
      { keyHash: stakeKeyHash(w2), neededFor: `withdrawal ${w2.stakeAddress}` },
      { keyHash: stakeKeyHash(w1), neededFor: 'certificate 0' },
    ])
    expect((await verify(unsigned, signedBy(unsigned, w1.payment, w1.stake, w2.stake))).valid).toBe(true)
  })

  test('a minting policy\'s native script must be present and satisfied', async () => {
    const policy = signaturePolicy(w2.payment)
    const policyId = policy.hash().to_hex()
    const minting = unsignedTransfer(devnet, w1.address, w2.address, undefined, { mint: [{ policy, name: 'GATED', quantity: 1n }] })
    const unsatisfied = await verify(minting, signedBy(minting, w1.payment))
    expect(unsatisfied).toMatchObject({ valid: false, missingSigners: [] })
    expect(unsatisfied.problems).toEqual([`native script ${policyId} (minting policy ${policyId}) is not satisfied by the signatures and validity interval`])
    expect((await verify(minting, signedBy(minting, w1.payment, w2.payment))).valid).toBe(true)

    const withoutScript = unsignedTransfer(devnet, w1.address, w2.address, undefined, { mint: [{ policy, name: 'GATED', quantity: 1n }], scripts: [] })
    expect((await verify(withoutScript, signedBy(withoutScript, w1.payment, w2.payment))).problems).toEqual([`no script witness for script ${policyId} (minting policy ${policyId})`])
  })

  test('time locks are judged against the validity interval', async () => {
    const tip = devnet.ledger.tip.slot
    const policy = CSL.NativeScript.new_timelock_expiry(CSL.TimelockExpiry.new_timelockexpiry(CSL.BigNum.from_str(String(tip + 100))))
    const mint = [{ policy, name: 'EARLY', quantity: 1n }]
    const open = unsignedTransfer(devnet, w1.address, w2.address, undefined, { mint })
    expect((await verify(open, signedBy(open, w1.payment))).valid).toBe(false)
    const bounded = unsignedTransfer(devnet, w1.address, w2.address, undefined, { mint, ttl: tip + 50 })
    const signed = signedBy(bounded, w1.payment)
    expect((await verify(bounded, signed)).valid).toBe(true)
    expect(submitHex(devnet, signed)).toBe(bounded.bodyHash)
  })

  test('inputs whose owner is unknown, and a transaction without witnesses, are problems', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const unknownOwner = await verifySignedTransaction(signedBy(unsigned, w1.payment), { expectedBodyHash: unsigned.bodyHash, inputOwners: {} })
    expect(unknownOwner).toMatchObject({ valid: false, problems: [`the owner of input ${unsigned.inputs[0].ref} is unknown`] })

    const unsignedResult = await verify(unsigned, unsigned.hex)
    expect(unsignedResult).toMatchObject({ valid: false, witnessCount: 0, problems: ['the transaction has no vkey witnesses'] })
    expect(unsignedResult.missingSigners).toEqual([{ keyHash: keyHashOf(w1.payment), neededFor: `input ${unsigned.inputs[0].ref}` }])
  })

  test('extra signers the signing request names must sign', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const result = await verifySignedTransaction(signedBy(unsigned, w1.payment), { expectedBodyHash: unsigned.bodyHash, inputOwners: unsigned.owners, extraSigners: [keyHashOf(w2.payment)] })
    expect(result.missingSigners).toEqual([{ keyHash: keyHashOf(w2.payment), neededFor: 'the signing request' }])
  })
})

describe('unusable input throws', () => {
  test('a transaction for another build is BODY_HASH_MISMATCH', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address, 5_000_000n)
    const other = unsignedTransfer(devnet, w1.address, w2.address, 8_000_000n)
    expect(await errorCode(() => verify(other, signedBy(unsigned, w1.payment)))).toBe('BODY_HASH_MISMATCH')
  })

  test('malformed CBOR is MALFORMED_CBOR', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    expect(await errorCode(() => verify(unsigned, 'zz'))).toBe('MALFORMED_CBOR')
    expect(await errorCode(() => verify(unsigned, unsigned.hex.slice(0, -6)))).toBe('MALFORMED_CBOR')
  })
})
