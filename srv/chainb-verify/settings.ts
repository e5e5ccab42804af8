import { numberSetting, optionalSetting, requiresBlock } from '../lib/settings.ts'

/**
 * The verify lane's limits: an environment variable first, else `cds.requires['chain-b'].verify.<name>`,
 * else the default. Read at each use.
 */
export interface VerifySettings {
  /** Calls per second each client address may make (CHAIN_B_VERIFY_RATE_PER_SECOND, default 10). */
  ratePerSecond: number
  /** Calls an address may make at once before the rate applies (CHAIN_B_VERIFY_BURST, default 30). */
  burst: number
  /**
   * Sponsor ids besides this service's own whose content roots the lane takes as computed from
   * their documents (CHAIN_B_TRUSTED_ROOT_VOUCHERS, comma-separated 64-hex ids; e.g. the other
   * deployments of the same operator). Default none.
   */
  trustedRootVouchers: string[]
}

export function verifySettings(): VerifySettings {
  const given = (requiresBlock('chain-b').verify ?? {}) as Record<string, string | number | undefined>
  const positive = (name: string, value: string | number | undefined, fallback: number) => {
    const number = numberSetting(name, value, fallback)
    if (!(number > 0)) throw new Error(`Setting ${name} must be a positive number, got '${number}'`)
    return number
  }
  return {
    ratePerSecond: positive('CHAIN_B_VERIFY_RATE_PER_SECOND', given.ratePerSecond, 10),
    burst: positive('CHAIN_B_VERIFY_BURST', given.burst, 30),
    trustedRootVouchers: vouchersOf(optionalSetting('CHAIN_B_TRUSTED_ROOT_VOUCHERS', given.trustedRootVouchers)),
  }
}

function vouchersOf(text: string | undefined): string[] {
  const ids = (text ?? '').split(',').map(id => id.trim().toLowerCase()).filter(Boolean)
  const invalid = ids.find(id => !/^[0-9a-f]{64}$/.test(id))
  if (invalid) throw new Error(`Setting CHAIN_B_TRUSTED_ROOT_VOUCHERS must list sponsor ids of 64 hex characters, got '${invalid.slice(0, 80)}'`)
  return ids
}
