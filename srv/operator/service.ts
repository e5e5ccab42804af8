import cds from '@sap/cds'
import { Grants, Key, Keys, KeyStatuses, Packs, Plans, Prices, Vouchers, createVouchers, exportAudit, exportLedger, exportUsage, issueGrant, issueKey, verifyAudit } from '#cds-models/OperatorService'
import { ApiKey } from '#cds-models/gateway'
import { mcpConfiguration } from '../gateway/key-delivery.ts'
import { GRANT_PREFIXES, isProduct } from '../gateway/keys.ts'
import { gatewayConfig } from '../gateway/config.ts'
import { undrawnLeased } from '../gateway/ledger.ts'
import { ApiError, badInput } from '../lib/errors.ts'
import { currentActor, recordAction, verifyAudit as checkAudit } from './audit.ts'
import * as actions from './key-actions.ts'
import { startExport } from './exports.ts'
import * as voucherActions from './voucher-actions.ts'
import { auditedSubscriptionChange } from './webhook-subscriptions.ts'

/**
 * The operator's service (service.cds): reads are CAP's own; each action wires a named operator
 * action (key-actions.ts), which runs in the request's transaction and audits itself.
 */
export class OperatorService extends cds.ApplicationService {
  init() {
    this.after('READ', Keys, addLeasedUnits)
    this.on('READ', KeyStatuses, () => keyStatuses())
    this.after(['credit', 'debit', 'changePlan', 'suspend', 'resume', 'setExpiry', 'revoke'], Keys, unitsAsText)
    this.after(issueKey, unitsAsText)
    this.after(createVouchers, (batch: unknown) => (batch as { vouchers?: { units: unknown }[] } | undefined)?.vouchers?.forEach(voucher => (voucher.units = String(voucher.units))))
    this.on(Key.actions.credit, req => actions.creditKey(idOf(req), unitsOf(req.data.units), reasonOf(req.data.reason, true)!))
    this.on(Key.actions.debit, req => actions.debitKey(idOf(req), unitsOf(req.data.units), reasonOf(req.data.reason, true)!))
    this.on(Key.actions.changePlan, req => actions.changeKeyPlan(idOf(req), req.data.plan!, reasonOf(req.data.reason)))
    this.on(Key.actions.suspend, req => actions.suspendKey(idOf(req), reasonOf(req.data.reason)))
    this.on(Key.actions.resume, req => actions.resumeKey(idOf(req), reasonOf(req.data.reason)))
    this.on(Key.actions.setExpiry, req => actions.setKeyExpiry(idOf(req), timeOf(req.data.validUntil), reasonOf(req.data.reason)))
    // Keys and Grants both have `revoke`: each is registered with its entity.
    this.on('revoke', Keys, req => actions.revokeKey(idOf(req), reasonIn(req)))
    this.on(Key.actions.rotate, async req => {
      const rotated = await actions.rotateKey(idOf(req), reasonOf(req.data.reason))
      return { ID: rotated.id, key: rotated.key, mcpConfiguration: JSON.stringify(mcpConfiguration(rotated.key, gatewayConfig().publicUrl)) }
    })
    this.on(issueKey, async req => {
      const { plan, units, validDays, label, boundAddress, reason } = req.data
      const issued = await actions.issueKey({
        plan: plan!, units: units === null || units === undefined ? undefined : unitsOf(units), validDays: validDays ?? undefined,
        label: label ?? undefined, boundAddress: boundAddress ?? undefined,
      }, reasonOf(reason))
      return {
        ID: issued.id, key: issued.key, plan: issued.plan, unitsLeft: issued.unitsLeft, validUntil: issued.validUntil,
        mcpConfiguration: JSON.stringify(mcpConfiguration(issued.key, gatewayConfig().publicUrl)),
      }
    })
    this.on('revoke', Grants, req => actions.revokeGrant(idOf(req), reasonIn(req)))
    this.on(issueGrant, async req => {
      const { product, operations, label, subject, validUntil, reason } = req.data
      if (!product || !isProduct(product)) throw badInput('INVALID_PRODUCT', `product must be one of ${Object.keys(GRANT_PREFIXES).join(', ')}`, 'product')
      const issued = await actions.issueGrant({
        product, operations: operations ?? undefined, label: label ?? undefined, subject: subject ?? undefined, validUntil: timeOf(validUntil) ?? undefined,
      }, reasonOf(reason))
      return { ID: issued.ID, token: issued.token, product: issued.product, subject: issued.subject, validUntil: issued.validUntil }
    })
    this.on('revoke', Vouchers, req => voucherActions.revokeVoucher(idOf(req), reasonIn(req)))
    this.on(createVouchers, async req => {
      const { units, count, uses, expiresAt, label, reason } = req.data
      const created = await voucherActions.createVouchers({
        units: unitsOf(units), count: count!, uses: uses ?? undefined, expiresAt: expiresAt ?? undefined, label: label ?? undefined,
      }, reasonOf(reason))
      return {
        vouchers: created.map(voucher => ({ ID: voucher.id, code: voucher.code, units: voucher.units, uses: voucher.uses, expiresAt: voucher.expiresAt, label: voucher.label })),
        csv: voucherActions.vouchersCsv(created),
      }
    })
    this.on(['CREATE', 'UPDATE'], ['Plans', 'Prices', 'Packs'], (req, next) => auditedRowChange(req, () => next()))
    // Route classes are the services' own: no price is added, neither by POST (@restrict) nor from a new draft.
    this.before('NEW', 'Prices.drafts', () => {
      throw new ApiError(403, 'PRICE_CLASS_FIXED', 'The route classes are the services\' own: a price is edited, never added')
    })
    this.on(verifyAudit, () => checkAudit())
    this.on(exportLedger, req => startExport('ledger', req.data))
    this.on(exportUsage, req => startExport('usage', req.data))
    this.on(exportAudit, req => startExport('audit', req.data))
    this.on(['CREATE', 'UPDATE', 'DELETE'], 'WebhookSubscriptions', (req, next) => auditedSubscriptionChange(req, () => next()))
    return super.init()
  }
}

/** What the audit calls a plan or a price, by its key. */
const ROWS = { [Plans.name]: { kind: 'plan', key: 'name' }, [Prices.name]: { kind: 'price', key: 'routeClass' }, [Packs.name]: { kind: 'pack', key: 'name' } } as const

/** A plan or price written as CAP writes it (within the bounds the model annotates), then audited with the row before and after. */
async function auditedRowChange(req: cds.Request, next: () => Promise<unknown>) {
  const { kind, key } = ROWS[req.target!.name]
  const id = String((req.data as Record<string, unknown>)[key])
  const read = () => SELECT.one.from(req.target as cds.entity).where({ [key]: id })
  const before = await read()
  if (req.event === 'CREATE' && before) throw new ApiError(409, 'ALREADY_EXISTS', `There is a ${kind} named '${id}' already: change it with PATCH`, { target: key })
  const result = await next()
  await recordAction({ actor: currentActor(), action: `${kind}.${req.event === 'CREATE' ? 'create' : 'update'}`, target: `${kind}:${id}`, before: before ?? null, after: await read() })
  return result
}

/** What each status of a key means (every status of the model's enum: the compiler checks it). */
const KEY_STATUS_MEANINGS: Record<keyof typeof ApiKey.status, { description: string; servesCalls: boolean }> = {
  active: { description: 'Calls are served and charged', servesCalls: true },
  suspended: { description: 'Calls are refused (403 KEY_SUSPENDED) until the key is resumed', servesCalls: false },
  revoked: { description: 'The key has ended for good (401); its grants are revoked too', servesCalls: false },
}

/** The statuses of the key model's enum, in the order the model lists them, with what each means. */
const keyStatuses = () => Object.values(ApiKey.status).map(code => ({ code, ...KEY_STATUS_MEANINGS[code] }))

/** The key or grant a bound action is called on: `Keys(<id>)`, `Grants(<id>)`. */
function idOf(req: cds.Request): string {
  const [key] = req.params as (string | { ID: string })[]
  return typeof key === 'string' ? key : key.ID
}

/** Units arrive as a JSON string or number (Int64); only a whole number is taken. */
function unitsOf(value: unknown): number {
  const text = String(value).trim()
  if (!/^-?\d{1,16}$/.test(text)) throw badInput('INVALID_UNITS', `units must be a whole number, got '${text.slice(0, 40)}'`, 'units')
  return Number(text)
}

function reasonOf(value: string | null | undefined, required = false): string | null {
  const reason = value?.trim() || null
  if (required && !reason) throw badInput('REASON_REQUIRED', 'Say why: reason is required for a credit or a debit', 'reason')
  return reason
}

/** The reason of a `revoke`, registered by name (its request's data is typed as the entity's). */
const reasonIn = (req: cds.Request) => reasonOf((req.data as { reason?: string | null }).reason)

function timeOf(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null
  const time = Date.parse(value)
  if (Number.isNaN(time)) throw badInput('INVALID_TIME', `validUntil must be a time, got '${String(value).slice(0, 40)}'`, 'validUntil')
  return new Date(time).toISOString()
}

/** Each key read shows the units its open leases hold (still the key's). */
async function addLeasedUnits(result: unknown) {
  const rows = (Array.isArray(result) ? result : result ? [result] : []) as { ID?: string; unitsLeased?: string }[]
  const ids = rows.map(row => row.ID).filter((id): id is string => !!id)
  if (!ids.length) return
  const leased = await undrawnLeased(ids)
  for (const row of rows) if (row.ID) row.unitsLeased = String(leased.get(row.ID) ?? 0)
}

/**
 * Units (Int64) are JSON strings in every answer, as CAP 10 reads them (OData's IEEE754Compatible
 * form): the key or issued key an action answers carries them as strings too, not as the numbers it computed.
 */
function unitsAsText(key: unknown) {
  const row = key as { unitsLeft?: unknown; unitsLeased?: unknown } | undefined
  if (!row) return
  if (row.unitsLeft !== undefined && row.unitsLeft !== null) row.unitsLeft = String(row.unitsLeft)
  if (row.unitsLeased !== undefined && row.unitsLeased !== null) row.unitsLeased = String(row.unitsLeased)
}

export default OperatorService
