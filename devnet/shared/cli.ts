import { parseArgs } from 'node:util'

/** A failure the command line reports in one line on stderr, with its exit code. */
export class CliError extends Error {
  readonly exitCode: number
  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

/** One chain's devnet commands, as `npm run devnet` serves them. */
export interface ChainCommands {
  /** The chain as messages name it: `chain-A`. */
  chain: string
  usage: string
  /** The command line that lists the commands. */
  help: string
  /** The refusal in production, given why this is production. */
  refusal(reason: string): string
  commands: Record<string, (args: string[]) => unknown>
  /** Errors besides CliError and DevnetStateError that the user can act on (reported in one line). */
  isUserError?(error: unknown): error is Error
}

/** Why this is production, if it is: the devnets refuse to run there. */
export function productionReason(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_ENV === 'production') return 'NODE_ENV is production'
  if ((env.CDS_ENV ?? '').split(',').map(p => p.trim()).includes('production')) return 'CDS_ENV includes the production profile'
  return undefined
}

interface OptionSpec<Required extends string, Optional extends string> {
  required: Required[]
  optional?: Optional[]
  /** The command line shown when a required option is missing. */
  usage: string
}

/** `--name value` or `--name=value` for each of the names, the required ones present, nothing else. */
export function parseOptions<Required extends string, Optional extends string = never>(
  args: string[], spec: OptionSpec<Required, Optional>,
): Record<Required, string> & Partial<Record<Optional, string>> {
  const names: string[] = [...spec.required, ...(spec.optional ?? [])]
  const { tokens } = parseArgs({ args, options: Object.fromEntries(names.map(name => [name, { type: 'string' as const }])), strict: false, allowPositionals: true, tokens: true })
  const options: Partial<Record<string, string>> = {}
  for (const token of tokens) {
    if (token.kind !== 'option' || token.rawName !== `--${token.name}` || !names.includes(token.name)) {
      throw new CliError(`Unexpected argument '${args[token.index]}'; the command takes ${listed(names)}.`, 2)
    }
    if (!token.value) throw new CliError(`--${token.name} needs a value.`, 2)
    options[token.name] = token.value
  }
  const missing = spec.required.filter(name => options[name] === undefined)
  if (missing.length) throw new CliError(`Missing ${missing.map(n => `--${n}`).join(' and ')}; usage: ${spec.usage}.`, 2)
  return options as Record<Required, string> & Partial<Record<Optional, string>>
}

/** `--a and --b`, `--a, --b and --c`. */
function listed(names: string[]): string {
  const flags = names.map(name => `--${name}`)
  return flags.length > 1 ? `${flags.slice(0, -1).join(', ')} and ${flags[flags.length - 1]}` : flags.join('')
}
