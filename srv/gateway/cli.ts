import cds from '@sap/cds'
import { parseArgs } from 'node:util'
import { issueGrant } from './accounts.ts'
import { deploySqliteFile } from '../lib/development-database.ts'
import { compiledModel } from '../lib/model-cache.ts'
import { GRANT_PREFIXES, isProduct } from './keys.ts'

/**
 * The gateway's commands of the operator's command line (srv/cli.ts), and how a command line runs
 * its commands against the configured database (the SQLite file in development, PostgreSQL with
 * CDS_ENV=pg or in production). The key commands are the operator's (srv/operator/cli.ts).
 *
 *   npm run gateway -- grants issue --product chain-a|chain-b [--key <id>] [--valid-days D] [--label L]
 *
 * (`grants revoke` is the operator's: it is audited.)
 */

export const GATEWAY_USAGE = `  npm run gateway -- grants issue --product chain-a|chain-b [--key <id>] [--valid-days D] [--label L]`

export type Options = Record<string, string>
/** A command by its group and name (`keys issue`). */
export type Commands = Record<string, (positional: string[], options: Options) => Promise<void>>

/** How long a command waits for servers writing the same SQLite file. */
const CLI_BUSY_TIMEOUT_MS = 60_000

/** Options that take no value. */
const FLAGS = new Set(['quiet'])

/** Every option a command reads: the flags, and the rest taking a value. */
const OPTIONS = Object.fromEntries([
  ...[...FLAGS].map(name => [name, { type: 'boolean' as const }]),
  ...['units', 'plan', 'valid-days', 'label', 'bound-address', 'product', 'key', 'count', 'uses', 'expires', 'reason'].map(name => [name, { type: 'string' as const }]),
])

/** What the command line prints when it is not called right: its commands. */
let usageText = ''

/** Runs the command the arguments name, then ends the process with its exit code; `usage` lists the commands. */
export function runCommandLine(commands: Commands, usage: string) {
  usageText = `usage:\n${usage}`
  main(process.argv.slice(2), commands, usageText).then(
    code => process.exit(code),
    error => {
      console.error(error instanceof Error ? error.message : String(error))
      process.exit(1)
    },
  )
}

async function main(args: string[], commands: Commands, usage: string): Promise<number> {
  const [group, command, ...rest] = args
  const { positional, options } = parse(rest)
  const run = commands[`${group} ${command}`]
  if (!run) {
    console.error(usage)
    return group ? 1 : 0
  }
  await connect()
  await run(positional, options)
  // A command that found nothing to act on (revoke of an unknown id) set the exit code.
  return Number(process.exitCode ?? 0)
}

export const GATEWAY_COMMANDS: Commands = {
  'grants issue': async (_, options) => {
    const product = required(options.product, '--product')
    if (!isProduct(product)) throw new Error(`--product must be one of ${Object.keys(GRANT_PREFIXES).join(', ')}`)
    const validUntil = options['valid-days'] ? new Date(Date.now() + wholeNumber(options['valid-days'], '--valid-days') * 86_400_000).toISOString() : undefined
    const grant = await issueGrant({ product, apiKeyId: options.key, validUntil, label: options.label })
    console.log(`agent grant on ${product} (token shown once; send it as x-agent-token to a self-hosted instance):\n\n  ${grant.token}\n\nid ${grant.id}`)
  },
}

async function connect() {
  cds.log('cds', 'warn')
  cds.log('deploy', 'warn')
  cds.model = await compiledModel()
  // Servers may be writing the same SQLite file: a command waits its turn rather than fail (a
  // server's own connection waits 5 s at most, since waiting blocks its event loop).
  Object.assign((cds.env.requires as Record<string, object>).db, { busyTimeoutMs: CLI_BUSY_TIMEOUT_MS })
  await deploySqliteFile()
  await cds.connect.to('db')
}

function parse(args: string[]): { positional: string[]; options: Options } {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: false, allowPositionals: true })
  const options: Options = {}
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') options[name] = value
    else if (value === true && FLAGS.has(name)) options[name] = 'yes'
  }
  return { positional: positionals, options }
}

export function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is required\n${usageText}`)
  return value
}

export function wholeNumber(value: string | undefined, name: string): number {
  const number = Number(required(value, name))
  if (!Number.isInteger(number) || number < 0) throw new Error(`${name} must be a whole number, got '${value}'`)
  return number
}
