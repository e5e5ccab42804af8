import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../../devnet/chain-a/index.ts'
import { enterpriseAddress, HsmSigner, type HsmConfig } from '../../../srv/chains/chain-a/signing/hsm.ts'
import { verifySignedTransaction } from '../../../srv/chains/chain-a/signing/verify.ts'
import { ADA, buildTx, largestUtxo, startDevnet } from '../../support/devnet.ts'
import { CKK_EC_EDWARDS, createSoftHsmToken, generateEd25519KeyPair, inspectPrivateKey, SOFTHSM_MODULE, type SoftHsmToken } from '../../support/softhsm.ts'
import { errorCode, FEE, submitHex, unsignedTransfer } from './support.ts'

const LABEL = 'cardano-payment'
const PIN_ENV = 'TEST_HSM_PIN'

let token: SoftHsmToken
let publicKey: CSL.PublicKey
let privateKeyFacts: ReturnType<typeof inspectPrivateKey>
let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
let config: HsmConfig
let env: Record<string, string>
const signers: HsmSigner[] = []

/** A signer closed after the suite. */
function signer(overrides: Partial<HsmConfig> = {}, withEnv: Record<string, string> = env): HsmSigner {
  const created = new HsmSigner({ ...config, ...overrides }, withEnv)
  signers.push(created)
  return created
}

beforeAll(async () => {
  token = createSoftHsmToken()
  publicKey = CSL.PublicKey.from_bytes(generateEd25519KeyPair(token, LABEL, '01'))
  generateEd25519KeyPair(token, 'verify-only', '02', { canSign: false })
  privateKeyFacts = inspectPrivateKey(token, LABEL)
  config = { modulePath: SOFTHSM_MODULE, slot: { index: 0 }, keyLabel: LABEL, requiredRole: 'hsm-signer', pinEnv: PIN_ENV }
  env = { [PIN_ENV]: token.pin }
  devnet = await startDevnet()
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
})

afterAll(async () => {
  for (const created of signers) await created.close()
  await devnet?.stop()
  token?.cleanup()
})

describe('the key in the token', () => {
  test('is an Ed25519 key generated in the token, sensitive, not extractable, its value unreadable', () => {
    expect(privateKeyFacts).toEqual({ keyType: CKK_EC_EDWARDS, sensitive: true, extractable: false, valueReadable: false })
  })
})

describe('errors', () => {
  test('without a configuration: HSM_NOT_CONFIGURED', async () => {
    const unconfigured = new HsmSigner(undefined, env)
    expect(unconfigured.status(0)).toMatchObject({ configured: false, connected: false, error: { code: 'HSM_NOT_CONFIGURED' } })
    expect(await errorCode(() => unconfigured.sign('84a0a0f5f6'))).toBe('HSM_NOT_CONFIGURED')
    expect(await errorCode(() => unconfigured.assertMayUse(() => true))).toBe('HSM_NOT_CONFIGURED')
  })

  test('without the PIN in the environment: HSM_PIN_MISSING', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const withoutPin = signer({}, {})
    expect(await errorCode(() => withoutPin.sign(unsigned.hex))).toBe('HSM_PIN_MISSING')
    expect(withoutPin.status(0)).toMatchObject({ configured: true, connected: false, keyLabel: LABEL, error: { code: 'HSM_PIN_MISSING', message: `the HSM user PIN is not set (environment variable ${PIN_ENV})` } })
  })

  test('an unloadable module, an empty slot or a wrong PIN: HSM_UNAVAILABLE', () => {
    expect(signer({ modulePath: '/nonexistent/libpkcs11.so' }).status(0).error?.code).toBe('HSM_UNAVAILABLE')
    expect(signer({ slot: { index: 7 } }).status(0).error).toEqual({ code: 'HSM_UNAVAILABLE', message: expect.stringMatching(/^no token in slot index 7/) })
    expect(signer({}, { [PIN_ENV]: '000000' }).status(0).error).toEqual({ code: 'HSM_UNAVAILABLE', message: expect.stringMatching(/refused the login.*CKR_PIN_INCORRECT/) })
  })

  test('no key under the label or id: HSM_KEY_NOT_FOUND', () => {
    expect(signer({ keyLabel: 'nope' }).status(0).error).toEqual({ code: 'HSM_KEY_NOT_FOUND', message: "the token holds no private Ed25519 key with label 'nope'" })
    expect(signer({ keyLabel: LABEL, keyId: '02' }).status(0).error?.code).toBe('HSM_KEY_NOT_FOUND')
  })

  test('a key the token will not sign with: HSM_SIGNING_FAILED', async () => {
    const unsigned = unsignedTransfer(devnet, w1.address, w2.address)
    const verifyOnly = signer({ keyLabel: 'verify-only' })
    expect(verifyOnly.status(0).connected).toBe(true)
    expect(await errorCode(() => verifyOnly.sign(unsigned.hex))).toBe('HSM_SIGNING_FAILED')
  })

  test('only the configured role may use the key', async () => {
    const hsm = signer()
    expect(hsm.mayUse(role => role === 'hsm-signer')).toBe(true)
    expect(hsm.mayUse(role => role === 'admin')).toBe(false)
    expect(() => hsm.assertMayUse(role => role === 'hsm-signer')).not.toThrow()
    expect(await errorCode(() => hsm.assertMayUse(() => false))).toBe('HSM_FORBIDDEN')
  })
})

describe('signing with the HSM key', () => {
  let hsm: HsmSigner
  let hsmAddress: string
  beforeAll(() => {
    hsm = signer()
    hsmAddress = enterpriseAddress(publicKey, 0)
  })

  test('status answers the key, its hash and its enterprise address', () => {
    expect(hsm.status(0)).toEqual({ configured: true, connected: true, keyLabel: LABEL, publicKeyHash: publicKey.hash().to_hex(), address: hsmAddress })
    expect(hsmAddress).toMatch(/^addr_test1v/)
    expect(hsm.status(1).address).toBe(enterpriseAddress(publicKey, 1))
    expect(hsm.status(1).address).toMatch(/^addr1v/)
  })

  test('the key is found by slot id and key id as well', () => {
    expect(signer({ slot: { id: token.slotId }, keyLabel: undefined, keyId: '01' }).status(0)).toMatchObject({ connected: true, publicKeyHash: publicKey.hash().to_hex() })
  })

  test('a devnet transaction spending from the HSM key\'s address is signed in the token and accepted', async () => {
    const funding = buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: hsmAddress, coin: 20n * ADA }], signers: [w1.payment] })
    devnet.submit(funding)
    devnet.produceBlock()
    const input = largestUtxo(devnet, hsmAddress)
    expect(input.value.coin).toBe(20n * ADA)

    const unsignedHex = Buffer.from(buildTx({ inputs: [input], outputs: [{ address: w2.address, coin: 5n * ADA }], fee: FEE, signers: [] })).toString('hex')
    const signed = await hsm.sign(unsignedHex)
    const verification = await verifySignedTransaction(signed.cborHex, { expectedBodyHash: signed.bodyHash, inputOwners: { [input.ref]: hsmAddress } })
    expect(verification).toMatchObject({ valid: true, signerKeyHashes: [publicKey.hash().to_hex()] })

    expect(submitHex(devnet, signed.cborHex)).toBe(signed.txHash)
    devnet.produceBlock()
    expect(devnet.ledger.unspentAt(w2.address).some(output => output.txHash === signed.txHash)).toBe(true)
    expect(devnet.ledger.unspentAt(hsmAddress).map(output => output.txHash)).toEqual([signed.txHash])
  })

  test('concurrent requests are signed one after the other, each correctly', async () => {
    const transactions = [5_000_000n, 6_000_000n, 7_000_000n].map(coin => unsignedTransfer(devnet, w1.address, w2.address, coin))
    const signed = await Promise.all(transactions.map(tx => hsm.sign(tx.hex)))
    for (const [i, tx] of transactions.entries()) {
      expect(signed[i].txHash).toBe(tx.bodyHash)
      const result = await verifySignedTransaction(signed[i].cborHex, { expectedBodyHash: tx.bodyHash, inputOwners: tx.owners, extraSigners: [] })
      expect(result.invalidSignatures).toEqual([])
      expect(result.signerKeyHashes).toEqual([publicKey.hash().to_hex()])
    }
  })

  test('after close, the signer connects again on the next use', async () => {
    await hsm.close()
    expect(hsm.status(0).connected).toBe(true)
  })
})
