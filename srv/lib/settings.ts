import cds from '@sap/cds'

/**
 * Configured values read with a default: unset, null and '' count as not configured. Services
 * read their options through requires-options.ts, which uses these.
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

export const profiles = (): string[] => (cds.env as any).profiles ?? []
export const isProduction = () => profiles().includes('production')
