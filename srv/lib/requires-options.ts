import cds from '@sap/cds'
import { booleanValue, numberValue, optionalValue, stringValue } from './settings.ts'
import { configuredVariables } from './bound-secrets.ts'

/**
 * A service's options, `cds.requires[service]`: set per profile in package.json, by CAP's own
 * variables (`CDS_REQUIRES_<SERVICE>_...`, `CDS_CONFIG`...), and by the service's documented
 * variables, one table mapping each onto the option it sets, which the bootstrap maps into cds.env
 * once at start (a bound `chain-access-secrets` service's credentials laid over the environment:
 * bound-secrets.ts). Inside the code there is one set of names: the options'. Values from the
 * environment stay text; a reader parses them with their defaults, naming the option and its
 * variable when one is malformed.
 */

export type OptionValue = string | number | boolean | null | undefined
export type Tree = Record<string, unknown>

/** The documented environment variables (README, Configuration) and the option path each one sets. */
export type Environment = Readonly<Record<string, string>>

const isTree = (value: unknown): value is Tree => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `target` with `source` laid over it, nested objects merged; neither is changed. */
function merged(target: Tree, source: Tree | undefined): Tree {
  const result: Tree = { ...target }
  for (const [key, value] of Object.entries(source ?? {})) result[key] = isTree(value) && isTree(result[key]) ? merged(result[key] as Tree, value) : value
  return result
}

/** The option at a dotted path. */
export function valueAt(options: object, path: string): OptionValue {
  let node: unknown = options
  for (const key of path.split('.')) node = isTree(node) ? node[key] : undefined
  return node as OptionValue
}

interface OptionsReader {
  string(path: string, fallback: string): string
  optional(path: string): string | undefined
  number(path: string, fallback: number): number
  boolean(path: string, fallback: boolean): boolean
  /** A positive number, a fraction cut to the whole number below. */
  positiveWhole(path: string, fallback: number): number
}

interface RequiresOptions<Options> {
  /** `cds.requires[service]` with CAP's split variables and the documented ones laid over it, as a new object: the environment wins over package.json. */
  options(requires?: Tree, env?: NodeJS.ProcessEnv): Options
  /** At start: the environment mapped into `cds.requires[service]` itself, for the service to find in its options. */
  apply(requires?: Tree, env?: NodeJS.ProcessEnv): Options
  /** Where an option is set, for messages: its path and the documented variable that sets it (or the variable alone, `named: 'variable'`). */
  optionName(path: string): string
  /** Reads options by path with defaults. */
  reader(options: Options): OptionsReader
}

interface RequiresOptionsStyle {
  /** Messages name an option by its path and variable (`option`, the default) or by its variable alone. */
  named?: 'option' | 'variable'
}

export function requiresOptions<Options extends object>(service: string, environment: Environment, style: RequiresOptionsStyle = {}): RequiresOptions<Options> {
  /** The documented variables that are set, as an options tree. */
  const fromEnvironment = (env: NodeJS.ProcessEnv): Tree => {
    const tree: Tree = {}
    for (const [name, path] of Object.entries(environment)) {
      const value = env[name]
      if (value === undefined || value === '') continue
      const keys = path.split('.')
      const leaf = keys.pop()!
      let node = tree
      for (const key of keys) node = (node[key] ??= {}) as Tree
      node[leaf] = value
    }
    return tree
  }

  // CAP splits CDS_REQUIRES_CHAIN_A_* at every underscore, into `requires.chain.a`.
  const [outer, inner] = service.split('-')
  const capSplitOptions = (requires: Tree): Tree | undefined => {
    const parent = requires[outer]
    return inner !== undefined && isTree(parent) && isTree(parent[inner]) ? parent[inner] : undefined
  }

  const options = (requires: Tree = cds.env.requires as Tree, env: NodeJS.ProcessEnv = configuredVariables()): Options => {
    const configured = isTree(requires[service]) ? requires[service] : {}
    return merged(merged(configured, capSplitOptions(requires)), fromEnvironment(env)) as Options
  }

  const apply = (requires: Tree = cds.env.requires as Tree, env: NodeJS.ProcessEnv = configuredVariables()): Options => {
    const given = options(requires, env)
    const block = (requires[service] ??= {}) as Tree
    Object.assign(block, given)
    if (capSplitOptions(requires)) delete (requires[outer] as Tree)[inner]
    return block as Options
  }

  const optionName = (path: string): string => {
    const variable = Object.keys(environment).find(name => environment[name] === path)
    if (style.named === 'variable' && variable) return variable
    return `cds.requires['${service}'].${path}${variable ? ` (${variable})` : ''}`
  }

  const reader = (given: Options): OptionsReader => {
    const number = (path: string, fallback: number) => numberValue(valueAt(given, path), optionName(path), fallback)
    return {
      string: (path, fallback) => stringValue(valueAt(given, path), fallback),
      optional: path => optionalValue(valueAt(given, path)),
      number,
      boolean: (path, fallback) => booleanValue(valueAt(given, path), fallback),
      positiveWhole: (path, fallback) => {
        const value = number(path, fallback)
        if (!(value > 0)) throw new Error(`Setting ${optionName(path)} must be a positive number, got ${value}`)
        return Math.floor(value)
      },
    }
  }

  return { options, apply, optionName, reader }
}
