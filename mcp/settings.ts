import { DEFAULT_URL, MCP_ENV } from './names.ts'

export interface ClientSettings {
  baseUrl: string
  key?: string
  user?: string
  password?: string
  timeoutMs: number
}

export class SettingsError extends Error {}

const DEFAULT_TIMEOUT_MS = 30_000

/** The client settings from the environment; a setting that cannot work is refused at start, naming the variable. */
export function settingsFromEnvironment(env: NodeJS.ProcessEnv = process.env): ClientSettings {
  const baseUrl = (env[MCP_ENV.url]?.trim() || DEFAULT_URL).replace(/\/+$/, '')
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new SettingsError(`${MCP_ENV.url} must be an http(s) address such as ${DEFAULT_URL}, not "${baseUrl}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SettingsError(`${MCP_ENV.url} must start with http:// or https://, not "${baseUrl}"`)
  const key = env[MCP_ENV.key]?.trim() || undefined
  const user = env[MCP_ENV.user]?.trim() || undefined
  if (key && /\s/.test(key)) throw new SettingsError(`${MCP_ENV.key} holds white space: paste the key exactly as it was shown`)
  const timeoutText = env[MCP_ENV.timeout]?.trim()
  const timeoutMs = timeoutText ? Number(timeoutText) : DEFAULT_TIMEOUT_MS
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1000 || timeoutMs > 600_000) throw new SettingsError(`${MCP_ENV.timeout} must be a whole number of milliseconds between 1000 and 600000, not "${timeoutText}"`)
  return { baseUrl, key, user, password: env[MCP_ENV.password] ?? '', timeoutMs }
}
