import { resolveHsmConfig } from '../../../srv/chains/chain-a/signing/hsm.ts'
import { SOFTHSM_MODULE } from '../../support/softhsm.ts'
import { errorCode } from './support.ts'

// How the HSM signer is configured; needs no token (the signing tests are in hsm.test.ts).
const LABEL = 'cardano-payment'

describe('configuration', () => {
  test('comes from the environment, else from the configuration block', () => {
    expect(resolveHsmConfig({})).toBeUndefined()
    expect(resolveHsmConfig({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_KEY_LABEL: LABEL, HSM_REQUIRES_ROLE: 'hsm-signer' })).toEqual({
      modulePath: SOFTHSM_MODULE, slot: { index: 0 }, keyLabel: LABEL, requiredRole: 'hsm-signer', pinEnv: 'HSM_PIN',
    })
    expect(resolveHsmConfig({ HSM_SLOT_ID: '42', HSM_PIN_ENV: 'VAULT_PIN' }, { pkcs11Module: '/opt/hsm.so', keyId: '01', requiresRole: 'treasurer', slot: 3 })).toEqual({
      modulePath: '/opt/hsm.so', slot: { id: '42' }, keyId: '01', requiredRole: 'treasurer', pinEnv: 'VAULT_PIN',
    })
  })

  test('is refused without a role, without a key selector, or with a bad slot', async () => {
    expect(await errorCode(() => resolveHsmConfig({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_KEY_LABEL: LABEL }))).toBe('HSM_NOT_CONFIGURED')
    expect(await errorCode(() => resolveHsmConfig({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_REQUIRES_ROLE: 'r' }))).toBe('HSM_NOT_CONFIGURED')
    expect(await errorCode(() => resolveHsmConfig({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_REQUIRES_ROLE: 'r', HSM_KEY_LABEL: LABEL, HSM_SLOT: 'first' }))).toBe('HSM_NOT_CONFIGURED')
  })

  test('never takes the PIN itself: it names the variable that holds it', () => {
    const resolved = resolveHsmConfig({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_KEY_LABEL: LABEL, HSM_REQUIRES_ROLE: 'r', HSM_PIN: '123456' })!
    expect(JSON.stringify(resolved)).not.toContain('123456')
  })
})
