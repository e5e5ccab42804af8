import cds from '@sap/cds'

/**
 * Runtime settings: values as configured (cds.env, per profile; for some services also an
 * environment variable first), read with a default. The README's configuration table lists them.
 */

type Raw = string | number | boolean | undefined | null

/** A configured value as text; unset, null and '' count as not configured. */
const given = (value: Raw): string | undefined => (value === undefined || value === null || value === '' ? undefined : String(value))

export function stringValue(value: Raw, fallback: string): string {
  return given(value) ?? fallback
}

export function optionalValue(value: Raw): string | undefined {
  return given(value)
}

/** A configured number; `name` says where it is set, for the message when it is not a number. */
export function numberValue(value: Raw, name: string, fallback: number): number {
  const raw = given(value)
  if (raw === undefined) return fallback
  const number = Number(raw)
  if (!Number.isFinite(number)) throw new Error(`Setting ${name} must be a number, got '${raw}'`)
  return number
}

export function booleanValue(value: Raw, fallback: boolean): boolean {
  const raw = given(value)
  return raw === undefined ? fallback : /^(1|true|yes|on)$/i.test(raw)
}

/** The environment variable when it is set, else the value from cds.env. */
const pick = (envName: string, fromCds: Raw): Raw => given(process.env[envName]) ?? fromCds

export const stringSetting = (envName: string, fromCds: Raw, fallback: string) => stringValue(pick(envName, fromCds), fallback)
export const numberSetting = (envName: string, fromCds: Raw, fallback: number) => numberValue(pick(envName, fromCds), envName, fallback)
export const booleanSetting = (envName: string, fromCds: Raw, fallback: boolean) => booleanValue(pick(envName, fromCds), fallback)

/** The `cds.requires[name]` block, or an empty object. */
export function requiresBlock(name: string): Record<string, any> {
  return ((cds.env.requires as any)?.[name] ?? {}) as Record<string, any>
}

export const profiles = (): string[] => (cds.env as any).profiles ?? []
export const isProduction = () => profiles().includes('production')
