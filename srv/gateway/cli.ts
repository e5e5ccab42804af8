import cds from '@sap/cds'
import { issueGrant, issueKey, listKeys, revokeGrant, revokeKey, rotateKey } from './accounts.ts'
import { credit } from './ledger.ts'
import { keyPrintout } from './key-delivery.ts'
import { gatewayConfig } from './config.ts'
import { deploySqliteFile } from '../lib/development-database.ts'
import { GRANT_PREFIXES, isProduct } from './keys.ts'
import { createVouchers, listVouchers, revokeVoucher, type CreatedVoucher } from './vouchers.ts'

/**
 * The operator's command line, against the configured database (the SQLite file in development,
 * PostgreSQL with CDS_ENV=pg or in production):
 *
 *   npm run gateway -- keys issue --units N [--plan P] [--valid-days D] [--label L] [--bound-address A] [--quiet]
 *   npm run gateway -- keys list | keys credit <id> N | keys revoke <id> | keys rotate <id>
 *   npm run gateway -- grants issue --product chain-a|chain-b [--key <id>] [--valid-days D] [--label L]
 *   npm run gateway -- grants revoke <id>
 *   npm run gateway -- vouchers create --units N --count M [--uses U] [--expires <ISO date or 30d/12h/45m>] [--label L] [--quiet]
 *   npm run gateway -- vouchers list | vouchers revoke <id>
 */

/** The plan of a key the operator issues here, unless --plan names another (db/data/gateway-Plans.csv). */
const OPERATOR_PLAN = 'operator'

const USAGE = `usage:
  npm run gateway -- keys issue --units N [--plan trial|standard|scale|operator (default ${OPERATOR_PLAN})] [--valid-days D] [--label L] [--bound-address A] [--quiet: print only the key]
  npm run gateway -- keys list
  npm run gateway -- keys credit <id> <units>
  npm run gateway -- keys revoke <id>
  npm run gateway -- keys rotate <id>
  npm run gateway -- grants issue --product chain-a|chain-b [--key <id>] [--valid-days D] [--label L]
  npm run gateway -- grants revoke <id>
  npm run gateway -- vouchers create --units N --count M [--uses U (redemptions by different keys, default 1)] [--expires <ISO date or 30d, 12h, 45m>] [--label L]
  npm run gateway -- vouchers list
  npm run gateway -- vouchers revoke <id>`

type Options = Record<string, string>

/** Options that take no value. */
const FLAGS = new Set(['quiet'])

async function main(args: string[]): Promise<number> {
  const [group, command, ...rest] = args
  const { positional, options } = parse(rest)
  const run = COMMANDS[`${group} ${command}`]
  if (!run) {
    console.error(USAGE)
    return group ? 1 : 0
  }
  await connect()
  await run(positional, options)
  // A command that found nothing to act on (revoke of an unknown id) set the exit code.
  return Number(process.exitCode ?? 0)
}

const COMMANDS: Record<string, (positional: string[], options: Options) => Promise<void>> = {
  'keys issue': async (_, options) => {
    const issued = await issueKey({
      units: wholeNumber(options.units, '--units'),
      plan: options.plan ?? OPERATOR_PLAN,
      validDays: options['valid-days'] === undefined ? undefined : wholeNumber(options['valid-days'], '--valid-days'),
      label: options.label,
      boundAddress: options['bound-address'],
    })
    if (options.quiet) return console.log(issued.key)
    console.log(keyPrintout(issued))
  },
  'keys list': async () => {
    const keys = await listKeys()
    if (!keys.length) return console.log('no keys')
    for (const key of keys)
      console.log([key.ID, key.hint + '…', key.plan_name, `${Number(key.unitsLeft)} units`, key.status, `until ${key.validUntil}`, key.boundAddress ?? '-', key.label ?? ''].join('  '))
  },
  'keys credit': async ([id, units]) => {
    const left = await credit(required(id, '<id>'), wholeNumber(units, '<units>'), 'operator credit')
    console.log(`credited ${units} units to ${id}; ${left} left`)
  },
  'keys revoke': async ([id]) => {
    const revoked = await revokeKey(required(id, '<id>'))
    console.log(revoked ? `revoked ${id} and its product grants` : `no active key ${id}`)
    if (!revoked) process.exitCode = 1
  },
  'keys rotate': async ([id]) => {
    const rotated = await rotateKey(required(id, '<id>'))
    if (!rotated) {
      console.log(`no active key ${id}`)
      process.exitCode = 1
      return
    }
    console.log(`new secret for ${id} (shown once; the old one no longer works):\n\n  ${rotated.key}\n`)
  },
  'grants issue': async (_, options) => {
    const product = required(options.product, '--product')
    if (!isProduct(product)) throw new Error(`--product must be one of ${Object.keys(GRANT_PREFIXES).join(', ')}`)
    const validUntil = options['valid-days'] ? new Date(Date.now() + wholeNumber(options['valid-days'], '--valid-days') * 86_400_000).toISOString() : undefined
    const grant = await issueGrant({ product, apiKeyId: options.key, validUntil, label: options.label })
    console.log(`agent grant on ${product} (token shown once; send it as x-agent-token to a self-hosted instance):\n\n  ${grant.token}\n\nid ${grant.id}`)
  },
  'grants revoke': async ([id]) => {
    const revoked = await revokeGrant(required(id, '<id>'))
    console.log(revoked ? `revoked grant ${id}` : `no active grant ${id}`)
    if (!revoked) process.exitCode = 1
  },
  'vouchers create': async (_, options) => {
    const vouchers = await createVouchers({
      units: wholeNumber(options.units, '--units'),
      count: wholeNumber(options.count, '--count'),
      uses: options.uses === undefined ? undefined : wholeNumber(options.uses, '--uses'),
      expiresAt: options.expires === undefined ? undefined : expiryOf(options.expires),
      label: options.label,
    })
    console.log(options.quiet ? vouchers.map(voucher => voucher.code).join('\n') : voucherPrintout(vouchers))
  },
  'vouchers list': async () => {
    const vouchers = await listVouchers()
    if (!vouchers.length) return console.log('no vouchers')
    for (const voucher of vouchers) {
      const state = voucher.revokedAt ? `revoked ${voucher.revokedAt}` : `until ${voucher.expiresAt ?? 'never'}`
      console.log([voucher.ID, voucher.hint, `${Number(voucher.units)} units`, `redeemed ${voucher.redeemedCount}/${voucher.maxRedemptions}`, state, voucher.label ?? ''].join('  '))
    }
  },
  'vouchers revoke': async ([id]) => {
    const revoked = await revokeVoucher(required(id, '<id>'))
    console.log(revoked ? `revoked voucher ${id}: its code no longer redeems` : `no unrevoked voucher ${id}`)
    if (!revoked) process.exitCode = 1
  },
}

/** The codes, each once, and how to redeem one. */
function voucherPrintout(vouchers: CreatedVoucher[]): string {
  const lines = vouchers.map(voucher => `  ${voucher.code}  id ${voucher.id}  units ${voucher.units}  uses ${voucher.uses}  expires ${voucher.expiresAt ?? 'never'}`)
  const example = `curl -X POST -H 'content-type: application/json' -d '{"code":"${vouchers[0].code}"}' ${gatewayConfig().publicUrl}/vouchers/redeem`
  return [
    `Voucher codes (shown once and stored only as a keyed hash: hand them out now):\n`,
    ...lines,
    `\nRedeem a code for a new key (or, with Authorization: Bearer <key>, as a top-up of that key):\n\n  ${example}`,
  ].join('\n')
}

const DURATION_UNITS_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000 }

/** An expiry given as a date (ISO) or as a time from now (30d, 12h, 45m). */
function expiryOf(text: string): string {
  const duration = /^(\d+)([dhm])$/.exec(text)
  if (duration) return new Date(Date.now() + Number(duration[1]) * DURATION_UNITS_MS[duration[2]]).toISOString()
  if (Number.isNaN(Date.parse(text))) throw new Error(`--expires must be an ISO date or a duration such as 30d, 12h or 45m, got '${text}'`)
  return text
}

async function connect() {
  cds.log('cds', 'warn')
  cds.log('deploy', 'warn')
  cds.model = cds.compile.for.nodejs(await cds.load('*'))
  await deploySqliteFile()
  await cds.connect.to('db')
}

function parse(args: string[]): { positional: string[]; options: Options } {
  const positional: string[] = []
  const options: Options = {}
  for (let i = 0; i < args.length; i++) {
    const name = args[i].slice(2)
    if (!args[i].startsWith('--')) positional.push(args[i])
    else options[name] = FLAGS.has(name) ? 'yes' : args[++i]
  }
  return { positional, options }
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is required\n${USAGE}`)
  return value
}

function wholeNumber(value: string | undefined, name: string): number {
  const number = Number(required(value, name))
  if (!Number.isInteger(number) || number < 0) throw new Error(`${name} must be a whole number, got '${value}'`)
  return number
}

main(process.argv.slice(2)).then(
  code => process.exit(code),
  error => {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  },
)
