import cds from '@sap/cds'

/**
 * Every runtime setting, resolved as: environment variable > cds.env (package.json `cds`, per
 * profile) > default. The README's configuration table lists the same names.
 */

type Raw = string | number | boolean | undefined | null

function pick(envName: string, fromCds: Raw): string | undefined {
  const fromEnv = process.env[envName]
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv
  if (fromCds === undefined || fromCds === null) return undefined
  return String(fromCds)
}

export function stringSetting(envName: string, fromCds: Raw, fallback: string): string {
  return pick(envName, fromCds) ?? fallback
}

export function optionalSetting(envName: string, fromCds: Raw): string | undefined {
  return pick(envName, fromCds)
}

export function numberSetting(envName: string, fromCds: Raw, fallback: number): number {
  const raw = pick(envName, fromCds)
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value)) throw new Error(`Setting ${envName} must be a number, got '${raw}'`)
  return value
}

export function booleanSetting(envName: string, fromCds: Raw, fallback: boolean): boolean {
  const raw = pick(envName, fromCds)
  if (raw === undefined) return fallback
  return /^(1|true|yes|on)$/i.test(raw)
}

/** The `cds.requires[name]` block, or an empty object. */
export function requiresBlock(name: string): Record<string, any> {
  return ((cds.env.requires as any)?.[name] ?? {}) as Record<string, any>
}

export const profiles = (): string[] => (cds.env as any).profiles ?? []
export const isProduction = () => profiles().includes('production')
