import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { Output } from '../../../devnet/chain-a/types.ts'
import {
  evaluatePolicies, parseSigningPolicies, policyRefusal, policyRequestFromTx, type PolicyRequest, type SigningPolicy,
} from '../../../srv/chains/chain-a/signing/policies.ts'
import { ADA, buildTx, signaturePolicy } from '../../support/devnet.ts'
import { errorCode } from './support.ts'

const key = (n: number) => CSL.PrivateKey.from_normal_bytes(Buffer.alloc(32, n))
const credential = (k: CSL.PrivateKey) => CSL.Credential.from_keyhash(k.to_public().hash())
const baseAddress = (payment: CSL.PrivateKey, stake: CSL.PrivateKey) => CSL.BaseAddress.new(0, credential(payment), credential(stake)).to_address().to_bech32()
const enterpriseAddress = (payment: CSL.PrivateKey) => CSL.EnterpriseAddress.new(0, credential(payment)).to_address().to_bech32()

const senderKey = key(1)
const sender = baseAddress(senderKey, key(2))
/** The sender's payment key under another address: still the sender's money. */
const senderEnterprise = enterpriseAddress(senderKey)
const recipient = baseAddress(key(3), key(4))
const otherRecipient = enterpriseAddress(key(5))
const script = signaturePolicy(key(6))
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(script.hash())).to_address().to_bech32()
const approver = key(7).to_public().hash().to_hex()

function request(overrides: Partial<PolicyRequest> = {}): PolicyRequest {
  return {
    signerType: 'browser-wallet',
    senderAddresses: [sender],
    outputs: [{ address: recipient, lovelace: 15n * ADA }, { address: sender, lovelace: 900n * ADA }, { address: senderEnterprise, lovelace: 50n * ADA }],
    requiredSigners: [],
    expiresInSeconds: 1800,
    ...overrides,
  }
}

const policy = (name: string, rules: SigningPolicy['rules']): SigningPolicy => ({ name, rules })

describe('evaluating signing policies', () => {
  test('no policies, or policies whose rules hold, allow the request', () => {
    expect(evaluatePolicies([], request())).toBeUndefined()
    expect(evaluatePolicies([policy('generous', { maxLovelacePerTx: 15n * ADA, allowedSignerTypes: ['browser-wallet'], maxExpirySeconds: 1800 })], request())).toBeUndefined()
  })

  test('an amount over the limit is refused; change back to the sender does not count', () => {
    const limit = policy('daily-limit', { maxLovelacePerTx: 10n * ADA })
    expect(evaluatePolicies([limit], request())).toEqual({
      policy: 'daily-limit', rule: 'maxLovelacePerTx', message: 'the transaction sends 15000000 lovelace, more than the limit of 10000000',
    })
    expect(evaluatePolicies([limit], request({ outputs: [{ address: recipient, lovelace: 10n * ADA }, { address: senderEnterprise, lovelace: 500n * ADA }] }))).toBeUndefined()
    expect(evaluatePolicies([limit], request({ outputs: [{ address: recipient, lovelace: 6n * ADA }, { address: otherRecipient, lovelace: 5n * ADA }] })))
      .toMatchObject({ rule: 'maxLovelacePerTx' })
  })

  test('a disallowed signer type is refused', () => {
    const hsmOnly = policy('treasury', { allowedSignerTypes: ['hsm', 'cardano-cli'] })
    expect(evaluatePolicies([hsmOnly], request())).toEqual({
      policy: 'treasury', rule: 'allowedSignerTypes', message: "signer type 'browser-wallet' is not allowed (allowed: hsm, cardano-cli)",
    })
    expect(evaluatePolicies([hsmOnly], request({ signerType: 'hsm' }))).toBeUndefined()
  })

  test('recipients may be listed as addresses, prefixes or scripts', () => {
    const toScriptOnly = policy('vault', { allowedRecipients: [`script:${script.hash().to_hex()}`] })
    expect(evaluatePolicies([toScriptOnly], request())).toEqual({ policy: 'vault', rule: 'allowedRecipients', message: `recipient ${recipient} is not allowed` })
    expect(evaluatePolicies([toScriptOnly], request({ outputs: [{ address: scriptAddress, lovelace: ADA }, { address: sender, lovelace: ADA }] }))).toBeUndefined()

    expect(evaluatePolicies([policy('known', { allowedRecipients: [recipient] })], request())).toBeUndefined()
    expect(evaluatePolicies([policy('prefix', { allowedRecipients: [recipient.slice(0, 20) + '*'] })], request())).toBeUndefined()
    expect(evaluatePolicies([policy('prefix', { allowedRecipients: [otherRecipient.slice(0, 20) + '*'] })], request())).toMatchObject({ rule: 'allowedRecipients' })
  })

  test('a signing request open too long is refused', () => {
    expect(evaluatePolicies([policy('short', { maxExpirySeconds: 600 })], request())).toEqual({
      policy: 'short', rule: 'maxExpirySeconds', message: 'the signing request stays open 1800 s, longer than the limit of 600 s',
    })
  })

  test('a required signer missing from the transaction is refused', () => {
    const fourEyes = policy('four-eyes', { requiredSigners: [approver] })
    expect(evaluatePolicies([fourEyes], request())).toEqual({
      policy: 'four-eyes', rule: 'requiredSigners', message: `the transaction does not require the signature of ${approver}`,
    })
    expect(evaluatePolicies([fourEyes], request({ requiredSigners: [approver.toUpperCase()] }))).toBeUndefined()
  })

  test('the first violated policy is answered', () => {
    const policies = [policy('allows', { maxExpirySeconds: 3600 }), policy('first', { allowedSignerTypes: ['hsm'] }), policy('second', { maxLovelacePerTx: 1n })]
    expect(evaluatePolicies(policies, request())?.policy).toBe('first')
  })

  test('a violation becomes a 403 naming the policy', () => {
    const error = policyRefusal({ policy: 'treasury', rule: 'allowedSignerTypes', message: "signer type 'custom' is not allowed (allowed: hsm)" })
    expect(error).toMatchObject({ status: 403, code: 'POLICY_REFUSED', target: 'treasury' })
    expect(error.message).toBe("signing policy 'treasury' refuses the request: signer type 'custom' is not allowed (allowed: hsm)")
  })
})

describe('policy requests and definitions', () => {
  test('a request is read from the unsigned transaction: outputs with their lovelace, and required signers', () => {
    const input = { txHash: '11'.repeat(32), index: 0, address: sender, value: { coin: 100n * ADA, assets: new Map() } } as Output
    const hex = Buffer.from(buildTx({ inputs: [input], outputs: [{ address: recipient, coin: 12n * ADA }], fee: 200_000n, requiredSigners: [approver], signers: [] })).toString('hex')
    const fromTx = policyRequestFromTx(hex, { signerType: 'cardano-cli', senderAddresses: [sender], expiresInSeconds: 900 })
    expect(fromTx).toEqual({
      signerType: 'cardano-cli', senderAddresses: [sender], expiresInSeconds: 900, requiredSigners: [approver],
      outputs: [{ address: recipient, lovelace: 12n * ADA }, { address: sender, lovelace: 100n * ADA - 12n * ADA - 200_000n }],
    })
    expect(evaluatePolicies([policy('limit', { maxLovelacePerTx: 10n * ADA })], fromTx)).toMatchObject({ rule: 'maxLovelacePerTx' })
  })

  test('definitions from JSON are checked', async () => {
    const parsed = parseSigningPolicies([{ name: 'limit', rules: { maxLovelacePerTx: '10000000', allowedSignerTypes: ['hsm'] } }])
    expect(evaluatePolicies(parsed, request({ signerType: 'hsm' }))).toMatchObject({ policy: 'limit', rule: 'maxLovelacePerTx' })
    expect(await errorCode(() => parseSigningPolicies({}))).toBe('INVALID_POLICY')
    expect(await errorCode(() => parseSigningPolicies([{ rules: {} }]))).toBe('INVALID_POLICY')
    expect(await errorCode(() => parseSigningPolicies([{ name: 'x', rules: { maxLovelace: 1 } }]))).toBe('INVALID_POLICY')
    expect(await errorCode(() => parseSigningPolicies([{ name: 'x', rules: { maxLovelacePerTx: '1.5' } }]))).toBe('INVALID_POLICY')
    expect(await errorCode(() => parseSigningPolicies([{ name: 'x', rules: { allowedSignerTypes: 'hsm' } }]))).toBe('INVALID_POLICY')
  })
})
