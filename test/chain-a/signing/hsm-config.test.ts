import { hsmLabel, hsmOptions } from '../../../srv/chaina-sign/hsm-settings.ts'
import { resolveHsmConfig } from '../../../srv/chains/chain-a/signing/hsm.ts'
import { SOFTHSM_MODULE } from '../../support/softhsm.ts'
import { errorCode } from './support.ts'

// How the HSM signer is configured; needs no token (the signing tests are in hsm.test.ts).
const LABEL = 'cardano-payment'

/** The configuration from these variables laid over `cds.requires['chain-a'].hsm`. */
const resolve = (env: NodeJS.ProcessEnv, hsm: Record<string, unknown> = {}) => resolveHsmConfig(hsmOptions({ 'chain-a': { hsm } }, env))

describe('configuration', () => {
  test('comes from the environment, else from the configuration block', () => {
    expect(resolve({})).toBeUndefined()
    expect(resolve({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_KEY_LABEL: LABEL, HSM_REQUIRES_ROLE: 'hsm-signer' })).toEqual({
      modulePath: SOFTHSM_MODULE, slot: { index: 0 }, keyLabel: LABEL, requiredRole: 'hsm-signer', pinEnv: 'HSM_PIN',
    })
    expect(resolve({ HSM_SLOT_ID: '42', HSM_PIN_ENV: 'VAULT_PIN' }, { pkcs11Module: '/opt/hsm.so', keyId: '01', requiresRole: 'treasurer', slot: 3 })).toEqual({
      modulePath: '/opt/hsm.so', slot: { id: '42' }, keyId: '01', requiredRole: 'treasurer', pinEnv: 'VAULT_PIN',
    })
  })

  test('is refused without a role, without a key selector, or with a bad slot', async () => {
    expect(await errorCode(() => resolve({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_KEY_LABEL: LABEL }))).toBe('HSM_NOT_CONFIGURED')
    expect(await errorCode(() => resolve({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_REQUIRES_ROLE: 'r' }))).toBe('HSM_NOT_CONFIGURED')
    expect(await errorCode(() => resolve({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_REQUIRES_ROLE: 'r', HSM_KEY_LABEL: LABEL, HSM_SLOT: 'first' }))).toBe('HSM_NOT_CONFIGURED')
  })

  test('never takes the PIN itself: it names the variable that holds it', () => {
    const resolved = resolve({ HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_KEY_LABEL: LABEL, HSM_REQUIRES_ROLE: 'r', HSM_PIN: '123456' })!
    expect(JSON.stringify(resolved)).not.toContain('123456')
  })

  test('each HSM_* variable sets its option under cds.requires[chain-a].hsm, and wins over it', () => {
    const options = { pkcs11Module: '/opt/a.so', slot: 2, slotId: '7', keyLabel: 'a', keyId: '0a', requiresRole: 'ra', pinEnv: 'PIN_A', label: 'configured' }
    const variables = { HSM_PKCS11_MODULE: '/opt/b.so', HSM_SLOT: '1', HSM_SLOT_ID: '8', HSM_KEY_LABEL: 'b', HSM_KEY_ID: '0b', HSM_REQUIRES_ROLE: 'rb', HSM_PIN_ENV: 'PIN_B', HSM_LABEL: 'from-env' }
    expect(hsmOptions({ 'chain-a': { hsm: options } }, {})).toEqual(options)
    expect(hsmOptions({ 'chain-a': { hsm: options } }, variables)).toEqual({ pkcs11Module: '/opt/b.so', slot: '1', slotId: '8', keyLabel: 'b', keyId: '0b', requiresRole: 'rb', pinEnv: 'PIN_B', label: 'from-env' })
    expect(hsmOptions({}, variables)).toEqual(hsmOptions({ 'chain-a': { hsm: options } }, variables))
    expect(resolve({}, { ...options, slotId: undefined })).toEqual({ modulePath: '/opt/a.so', slot: { index: 2 }, keyLabel: 'a', keyId: '0a', requiredRole: 'ra', pinEnv: 'PIN_A' })
    expect(hsmLabel(hsmOptions({ 'chain-a': { hsm: options } }, {}))).toBe('configured')
    expect(hsmLabel(hsmOptions({ 'chain-a': { hsm: options } }, { HSM_LABEL: 'from-env' }))).toBe('from-env')
    expect(hsmLabel({})).toBe('default')
  })

  test('the PIN is read from the environment only, never taken into the options', () => {
    expect(hsmOptions({}, { HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_PIN: '123456' })).toEqual({ pkcs11Module: SOFTHSM_MODULE })
  })
})
