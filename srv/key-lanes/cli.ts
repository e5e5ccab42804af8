import { gatewayConfig } from '../gateway/config.ts'
import { required, wholeNumber, type Commands } from '../gateway/cli.ts'
import { createVouchers, listVouchers, revokeVoucher, type CreatedVoucher } from './vouchers.ts'

/**
 * The voucher commands of the operator's command line (srv/cli.ts):
 *
 *   npm run gateway -- vouchers create --units N --count M [--uses U] [--expires <ISO date or 30d/12h/45m>] [--label L] [--quiet]
 *   npm run gateway -- vouchers list | vouchers revoke <id>
 */

export const VOUCHER_USAGE = `  npm run gateway -- vouchers create --units N --count M [--uses U (redemptions by different keys, default 1)] [--expires <ISO date or 30d, 12h, 45m>] [--label L]
  npm run gateway -- vouchers list
  npm run gateway -- vouchers revoke <id>`

export const VOUCHER_COMMANDS: Commands = {
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
