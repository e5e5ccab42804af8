/**
 * Secrets from a bound service instead of plain environment variables (which `cf env` shows): a
 * service in VCAP_SERVICES named or tagged `chain-access-secrets` (a user-provided service, `cf
 * cups chain-access-secrets -p '{"CHAIN_B_ATTESTER_SECRET": "..."}'`) whose credentials carry the
 * documented variables by name. They win over the environment, which stays the fallback. Read
 * through requires-options.ts, so every documented variable can come from there.
 */

export const SECRETS_SERVICE = 'chain-access-secrets'

interface BoundService {
  name?: string
  tags?: string[]
  credentials?: Record<string, unknown>
}

/** The variables the secrets service carries, as text (values that are not text or numbers are ignored). */
export function boundVariables(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const service = secretsService(env.VCAP_SERVICES)
  const variables: Record<string, string> = {}
  for (const [name, value] of Object.entries(service?.credentials ?? {}))
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') variables[name] = String(value)
  return variables
}

function secretsService(vcapServices: string | undefined): BoundService | undefined {
  if (!vcapServices) return undefined
  let bound: Record<string, BoundService[]>
  try {
    bound = JSON.parse(vcapServices)
  } catch {
    return undefined
  }
  const services = Object.values(bound ?? {}).flatMap(list => (Array.isArray(list) ? list : []))
  return services.find(service => service?.name === SECRETS_SERVICE) ?? services.find(service => service?.tags?.includes(SECRETS_SERVICE))
}

/** The bound variables, parsed once per VCAP_SERVICES value. */
let parsed: { vcap: string; variables: Record<string, string> } | undefined

/** The process's environment with the bound secrets laid over it. */
export function configuredVariables(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const vcap = env.VCAP_SERVICES
  if (!vcap) return env
  if (parsed?.vcap !== vcap) parsed = { vcap, variables: boundVariables(env) }
  return Object.keys(parsed.variables).length ? { ...env, ...parsed.variables } : env
}
