import cds from '@sap/cds'
import { userInfo } from 'node:os'
import { listKeys } from '../gateway/accounts.ts'
import { required, wholeNumber, type Commands, type Options } from '../gateway/cli.ts'
import { keyPrintout } from '../gateway/key-delivery.ts'
import { verifyAudit } from './audit.ts'
import * as actions from './key-actions.ts'

/**
 * The key commands of the operator's command line (srv/cli.ts). Each runs the operator service's own
 * action (key-actions.ts) in a transaction of its own, as the operator `cli:<system user>`, so the
 * audit records it as it records the service's:
 *
 *   npm run gateway -- keys issue --units N [--plan P] [--valid-days D] [--label L] [--bound-address A] [--quiet]
 *   npm run gateway -- keys list | keys credit|debit <id> N [--reason R] | keys revoke|rotate|suspend|resume <id> [--reason R]
 *   npm run gateway -- keys plan <id> <plan> | keys expiry <id> <ISO time or never>
 *   npm run gateway -- grants revoke <id> [--reason R] | audit verify
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
  npm run gateway -- audit verify`

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
  'audit verify': async () => {
    const verdict = await asOperator(() => verifyAudit())
    if (verdict.valid) return console.log(`the operator audit verifies: ${verdict.entries} entries, every link intact`)
    console.log(`the operator audit is broken at entry ${verdict.brokenAt}: ${verdict.reason}`)
    process.exitCode = 1
  },
}
