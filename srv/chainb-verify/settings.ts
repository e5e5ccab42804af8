import { numberSetting, requiresBlock } from '../lib/settings.ts'

/**
 * The verify lane's limits: an environment variable first, else `cds.requires['chain-b'].verify.<name>`,
 * else the default. Read at each use.
 */
export interface VerifySettings {
  /** Calls per second each client address may make (CHAIN_B_VERIFY_RATE_PER_SECOND, default 10). */
  ratePerSecond: number
  /** Calls an address may make at once before the rate applies (CHAIN_B_VERIFY_BURST, default 30). */
  burst: number
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
  }
}
