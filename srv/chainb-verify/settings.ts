import { requiresOptions, type Environment } from '../lib/requires-options.ts'

/**
 * The verify lane's limits, `cds.requires['chain-b'].verify`: a documented variable first
 * (VERIFY_ENVIRONMENT), else the option, else the default. Read at each use.
 */

/** The verify lane's documented environment variables (README, Configuration) and the option each one sets. */
const VERIFY_ENVIRONMENT: Environment = {
  CHAIN_B_VERIFY_RATE_PER_SECOND: 'verify.ratePerSecond',
  CHAIN_B_VERIFY_BURST: 'verify.burst',
  CHAIN_B_TRUSTED_ROOT_VOUCHERS: 'verify.trustedRootVouchers',
}

const options = requiresOptions('chain-b', VERIFY_ENVIRONMENT, { named: 'variable' })
interface VerifySettings {
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
  const read = options.reader(options.options())
  const positive = (path: string, fallback: number) => {
    const number = read.number(path, fallback)
    if (!(number > 0)) throw new Error(`Setting ${options.optionName(path)} must be a positive number, got '${number}'`)
    return number
  }
  return {
    ratePerSecond: positive('verify.ratePerSecond', 10),
    burst: positive('verify.burst', 30),
    trustedRootVouchers: vouchersOf(read.optional('verify.trustedRootVouchers')),
  }
}

function vouchersOf(text: string | undefined): string[] {
  const ids = (text ?? '').split(',').map(id => id.trim().toLowerCase()).filter(Boolean)
  const invalid = ids.find(id => !/^[0-9a-f]{64}$/.test(id))
  if (invalid) throw new Error(`Setting CHAIN_B_TRUSTED_ROOT_VOUCHERS must list sponsor ids of 64 hex characters, got '${invalid.slice(0, 80)}'`)
  return ids
}
