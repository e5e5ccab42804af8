import { resolveHsmConfig, type HsmConfig, type HsmOptions } from '../chains/chain-a/signing/hsm.ts'
import { requiresOptions, type Environment, type Tree } from '../lib/requires-options.ts'
import { stringValue } from '../lib/settings.ts'

/**
 * The HSM signer's settings, `cds.requires['chain-a'].hsm`: a documented variable first
 * (HSM_ENVIRONMENT), else the option. Read at each use, so a changed configuration gets a new
 * signer. The PIN is none of them: it stays in the environment, in the variable `pinEnv` names.
 */

/** The HSM's documented environment variables (README, Configuration) and the option each one sets. */
const HSM_ENVIRONMENT: Environment = {
  HSM_PKCS11_MODULE: 'hsm.pkcs11Module',
  HSM_SLOT: 'hsm.slot',
  HSM_SLOT_ID: 'hsm.slotId',
  HSM_KEY_LABEL: 'hsm.keyLabel',
  HSM_KEY_ID: 'hsm.keyId',
  HSM_REQUIRES_ROLE: 'hsm.requiresRole',
  HSM_PIN_ENV: 'hsm.pinEnv',
  HSM_LABEL: 'hsm.label',
}

const options = requiresOptions<{ hsm?: HsmOptions }>('chain-a', HSM_ENVIRONMENT, { named: 'variable' })

/** `cds.requires['chain-a'].hsm` with the HSM_* variables laid over it. */
export const hsmOptions = (requires?: Tree, env?: NodeJS.ProcessEnv): HsmOptions => options.options(requires, env).hsm ?? {}

/** The configuration in force; undefined when no module is configured (throws HSM_NOT_CONFIGURED when it is incomplete). */
export const hsmConfig = (given: HsmOptions = hsmOptions()): HsmConfig | undefined => resolveHsmConfig(given)

/** The name HsmConfigurations shows for the configuration (HSM_LABEL, default `default`). */
export const hsmLabel = (given: HsmOptions = hsmOptions()): string => stringValue(given.label, 'default')
