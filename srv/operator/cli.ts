import cds from '@sap/cds'
import { userInfo } from 'node:os'
import { listKeys } from '../gateway/accounts.ts'
import { required, wholeNumber, type Commands, type Options } from '../gateway/cli.ts'
import { gatewayConfig } from '../gateway/config.ts'
import { keyPrintout } from '../gateway/key-delivery.ts'
import { listVouchers, type CreatedVoucher } from '../key-lanes/vouchers.ts'
import { verifyAudit } from './audit.ts'
import * as actions from './key-actions.ts'
import * as voucherActions from './voucher-actions.ts'

/**
 * The key and voucher commands of the operator's command line (srv/cli.ts). Each runs the operator service's own
 * action (key-actions.ts, voucher-actions.ts) in a transaction of its own, as the operator `cli:<system user>`, so the
 * audit records it as it records the service's:
 *
 *   npm run gateway -- keys issue --units N [--plan P] [--valid-days D] [--label L] [--bound-address A] [--quiet]
 *   npm run gateway -- keys list | keys credit|debit <id> N [--reason R] | keys revoke|rotate|suspend|resume <id> [--reason R]
 *   npm run gateway -- keys plan <id> <plan> | keys expiry <id> <ISO time or never>
 *   npm run gateway -- grants revoke <id> [--reason R] | audit verify
 *   npm run gateway -- vouchers create --units N --count M [--uses U] [--expires <ISO date or 30d/12h/45m>] [--label L] [--quiet]
 *   npm run gateway -- vouchers list | vouchers revoke <id> [--reason R]
 */

/** The plan of a key the operator issues here, unless --plan names another (db/seed/gateway-Plans.csv). */
const OPERATOR_PLAN = 'operator'

export const OPERATOR_USAGE = `  npm run gateway -- keys issue --units N [--plan trial|standard|scale|operator (default ${OPERATOR_PLAN})] [--valid-days D] [--label L] [--bound-address A] [--quiet: print only the key]
  npm run gateway -- keys list
  npm run gateway -- keys credit|debit <id> <units> [--reason R]
  npm run gateway -- keys revoke|rotate|suspend|resume <id> [--reason R]
  npm run gateway -- keys plan <id> <plan> [--reason R]
  npm run gateway -- keys expiry <id> <ISO time, or never> [--reason R]
  npm run gateway -- grants revoke <id> [--reason R]
  npm run gateway -- audit verify
  npm run gateway -- vouchers create --units N --count M [--uses U (redemptions by different keys, default 1)] [--expires <ISO date or 30d, 12h, 45m>] [--label L] [--reason R]
  npm run gateway -- vouchers list
  npm run gateway -- vouchers revoke <id> [--reason R]`

/** The command line's operator: the system user who runs it. */
const cliOperator = () => new cds.User({ id: `cli:${userInfo().username}`, roles: ['admin'], attr: {} })

/** Runs an operator action in a transaction of its own, as the command line's operator. */
const asOperator = async <T>(action: () => Promise<T>): Promise<T> => (await cds.tx({ user: cliOperator() }, action)) as T

const reasonOf = (options: Options) => options.reason ?? null

const unitsLine = (key: actions.KeyAfter) => `${key.unitsLeft} left${key.unitsLeased ? ` (and ${key.unitsLeased} leased to a serving instance)` : ''}`

export const OPERATOR_COMMANDS: Commands = {
  'keys issue': async (_, options) => {
    const issued = await asOperator(() => actions.issueKey({
      units: wholeNumber(options.units, '--units'),
      plan: options.plan ?? OPERATOR_PLAN,
      validDays: options['valid-days'] === undefined ? undefined : wholeNumber(options['valid-days'], '--valid-days'),
      label: options.label,
      boundAddress: options['bound-address'],
    }, reasonOf(options)))
    if (options.quiet) return console.log(issued.key)
    console.log(keyPrintout(issued))
  },
  'keys list': async () => {
    const keys = await listKeys()
    if (!keys.length) return console.log('no keys')
    for (const key of keys)
      console.log([key.ID, key.hint + '…', key.plan_name, `${Number(key.unitsLeft)} units`, key.status, `until ${key.validUntil}`, key.boundAddress ?? '-', key.label ?? ''].join('  '))
  },
  'keys credit': async ([id, units], options) => {
    const key = await asOperator(() => actions.creditKey(required(id, '<id>'), wholeNumber(units, '<units>'), options.reason ?? 'operator credit'))
    console.log(`credited ${units} units to ${id}; ${unitsLine(key)}`)
  },
  'keys debit': async ([id, units], options) => {
    const key = await asOperator(() => actions.debitKey(required(id, '<id>'), wholeNumber(units, '<units>'), options.reason ?? 'operator debit'))
    console.log(`debited ${units} units from ${id}; ${unitsLine(key)}`)
  },
  'keys revoke': async ([id], options) => {
    await asOperator(() => actions.revokeKey(required(id, '<id>'), reasonOf(options)))
    console.log(`revoked ${id} and its product grants`)
  },
  'keys suspend': async ([id], options) => {
    await asOperator(() => actions.suspendKey(required(id, '<id>'), reasonOf(options)))
    console.log(`suspended ${id}: its calls are refused (403 KEY_SUSPENDED) until it is resumed`)
  },
  'keys resume': async ([id], options) => {
    await asOperator(() => actions.resumeKey(required(id, '<id>'), reasonOf(options)))
    console.log(`resumed ${id}`)
  },
  'keys rotate': async ([id], options) => {
    const rotated = await asOperator(() => actions.rotateKey(required(id, '<id>'), reasonOf(options)))
    console.log(`new secret for ${id} (shown once; the old one no longer works):\n\n  ${rotated.key}\n`)
  },
  'keys plan': async ([id, plan], options) => {
    const key = await asOperator(() => actions.changeKeyPlan(required(id, '<id>'), required(plan, '<plan>'), reasonOf(options)))
    console.log(`${id} is on plan ${key.plan_name} now`)
  },
  'keys expiry': async ([id, until], options) => {
    const text = required(until, '<ISO time, or never>')
    const time = text === 'never' ? null : Date.parse(text)
    if (Number.isNaN(time)) throw new Error(`<ISO time, or never> must be a time like 2027-01-31T00:00:00Z or the word never, got '${text}'`)
    const key = await asOperator(() => actions.setKeyExpiry(required(id, '<id>'), time === null ? null : new Date(time).toISOString(), reasonOf(options)))
    console.log(`${id} is valid until ${key.validUntil}`)
  },
  'grants revoke': async ([id], options) => {
    await asOperator(() => actions.revokeGrant(required(id, '<id>'), reasonOf(options)))
    console.log(`revoked grant ${id}`)
  },
  'vouchers create': async (_, options) => {
    const vouchers = await asOperator(() => voucherActions.createVouchers({
      units: wholeNumber(options.units, '--units'),
      count: wholeNumber(options.count, '--count'),
      uses: options.uses === undefined ? undefined : wholeNumber(options.uses, '--uses'),
      expiresAt: options.expires === undefined ? undefined : expiryOf(options.expires),
      label: options.label,
    }, reasonOf(options)))
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
  'vouchers revoke': async ([id], options) => {
    await asOperator(() => voucherActions.revokeVoucher(required(id, '<id>'), reasonOf(options)))
    console.log(`revoked voucher ${id}: its code no longer redeems`)
  },
  'audit verify': async () => {
    const verdict = await asOperator(() => verifyAudit())
    if (verdict.valid) return console.log(`the operator audit verifies: ${verdict.entries} entries, every link intact`)
    console.log(`the operator audit is broken at entry ${verdict.brokenAt}: ${verdict.reason}`)
    process.exitCode = 1
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
