import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { WalletAccounts, WalletFreeCredentials, WalletFreeUnitDays } from '#cds-models/gateway'
import { insertKey, type IssuedKey } from '../gateway/accounts.ts'
import { gatewayConfig } from '../gateway/config.ts'
import { laneConfig, type LaneConfig } from './config.ts'
import { chainA } from '../chains/chain-a/index.ts'
import { runWrite, tableOf } from '../lib/plain-sql.ts'

/**
 * A wallet's free units: a first key of plan `trial` with GATEWAY_WALLET_FREE_UNITS, given once
 * per payment credential and once per stake credential (one key makes endless addresses: other
 * stake parts, its enterprise address, its stake address), only to an address the chain knows or
 * that holds a minimum balance, within a daily budget for all wallets together. Whatever the
 * concurrency and however many instances: the credentials are recorded in one statement unique on
 * each (a sign-in whose address shares one with another's gets nothing, not half), and the day's
 * budget is taken by one guarded UPDATE, both in the transaction that issues the key.
 */

const { SELECT, UPDATE } = cds.ql

type FreeUnitsRefusalCode =
  | 'FREE_UNITS_OFF'
  | 'FREE_UNITS_ALREADY_GIVEN'
  | 'FREE_UNITS_NOT_ELIGIBLE'
  | 'FREE_UNITS_BUDGET_SPENT'
  | 'FREE_UNITS_CHAIN_UNAVAILABLE'

type FreeUnits = { given: IssuedKey } | { refused: FreeUnitsRefusalCode }

/** Gives the address's wallet its free first key, or says why not. Checks first what is cheap to check. */
export async function freeUnitsFor(address: string): Promise<FreeUnits> {
  const config = laneConfig()
  if (config.walletFreeUnits <= 0) return { refused: 'FREE_UNITS_OFF' }
  const credentials = credentialsOf(address)
  if (await anyGiven(credentials)) return { refused: 'FREE_UNITS_ALREADY_GIVEN' }
  if (!(await budgetLeftToday(config))) return { refused: 'FREE_UNITS_BUDGET_SPENT' }
  const standing = await chainStanding(address, config)
  if (standing !== 'qualifies') return { refused: standing }
  return giveFreeUnits(address, credentials, config)
}

// ---- credentials ---------------------------------------------------------------------------

/**
 * The credentials of a sign-in address (checked already): a base address has `payment:key:<hash>`
 * and `stake:key:<hash>` (or `stake:script:<hash>`), an enterprise address the first, a stake
 * address the second. Sorted, so concurrent sign-ins take their rows in one order and cannot deadlock.
 */
function credentialsOf(bech32: string): string[] {
  const address = CSL.Address.from_bech32(bech32)
  const reward = CSL.RewardAddress.from_address(address)
  if (reward) return [credentialId('stake', reward.payment_cred())]
  const base = CSL.BaseAddress.from_address(address)
  if (base) return [credentialId('payment', base.payment_cred()), credentialId('stake', base.stake_cred())].sort()
  return [credentialId('payment', address.payment_cred()!)]
}

function credentialId(role: 'payment' | 'stake', credential: CSL.Credential): string {
  const keyHash = credential.to_keyhash()
  return keyHash ? `${role}:key:${keyHash.to_hex()}` : `${role}:script:${credential.to_scripthash()!.to_hex()}`
}

/** Whether any of the credentials got free units before (a hint only: the claim decides). */
async function anyGiven(credentials: string[]): Promise<boolean> {
  return !!(await cds.tx(() => SELECT.one.from(WalletFreeCredentials).columns('credential').where({ credential: { in: credentials } })))
}

/**
 * Records every credential, or reports that one was recorded before: one INSERT of all of them
 * that skips those present. Fewer rows than credentials means another sign-in has one; the caller
 * then rolls back what this one inserted. A concurrent sign-in's uncommitted row makes the INSERT
 * wait for its outcome (PostgreSQL) or the transactions run one after the other (SQLite).
 */
async function recordCredentials(credentials: string[], address: string, now: string): Promise<boolean> {
  const rows = credentials.map(() => '(?, ?, ?)').join(', ')
  const inserted = await runWrite(
    `INSERT INTO ${tableOf(WalletFreeCredentials)} (credential, address, givenAt) VALUES ${rows} ON CONFLICT DO NOTHING`,
    credentials.flatMap(credential => [credential, address, now]),
  )
  return inserted === credentials.length
}

// ---- the daily budget ----------------------------------------------------------------------

const utcDayOf = (isoTime: string) => isoTime.slice(0, 10)

/** Whether today's budget still holds one wallet's free units (a hint only: the guarded UPDATE decides). */
async function budgetLeftToday(config: LaneConfig): Promise<boolean> {
  const today = await cds.tx(() => SELECT.one.from(WalletFreeUnitDays).columns('units').where({ utcDay: utcDayOf(new Date().toISOString()) }))
  return Number(today?.units ?? 0) + config.walletFreeUnits <= config.walletFreeDailyUnits
}

/** Takes the units from the day's budget: one guarded UPDATE, so the instances together never give more than the budget. */
async function takeFromDailyBudget(units: number, dailyUnits: number, now: string): Promise<boolean> {
  const table = tableOf(WalletFreeUnitDays)
  const utcDay = utcDayOf(now)
  await runWrite(`INSERT INTO ${table} (utcDay, units) VALUES (?, 0) ON CONFLICT DO NOTHING`, [utcDay])
  return (await runWrite(`UPDATE ${table} SET units = units + ? WHERE utcDay = ? AND units + ? <= ?`, [units, utcDay, units, dailyUnits])) === 1
}

// ---- what the chain knows of the address ---------------------------------------------------

type Standing = 'qualifies' | 'FREE_UNITS_NOT_ELIGIBLE' | 'FREE_UNITS_CHAIN_UNAVAILABLE'

/**
 * Whether the chain qualifies the address: it holds the minimum balance (a stake address: its
 * account controls that much stake), or, with the history rule on, the chain knows it (a
 * transaction paid to it; a stake address: its account). One read from the chain; when the chain
 * does not answer, the sign-in goes on without free units.
 */
async function chainStanding(address: string, config: LaneConfig): Promise<Standing> {
  if (config.walletFreeMinLovelace <= 0) return 'qualifies'
  try {
    const { known, lovelace } = await onChain(address)
    const qualifies = (config.walletFreeHistory && known) || lovelace >= BigInt(Math.ceil(config.walletFreeMinLovelace))
    return qualifies ? 'qualifies' : 'FREE_UNITS_NOT_ELIGIBLE'
  } catch (error) {
    cds.log('gateway').warn('could not ask the chain whether a wallet address qualifies for free units:', error)
    return 'FREE_UNITS_CHAIN_UNAVAILABLE'
  }
}

async function onChain(address: string): Promise<{ known: boolean; lovelace: bigint }> {
  const { port } = await chainA()
  if (address.startsWith('stake')) {
    const account = await port.account(address)
    return { known: !!account, lovelace: BigInt(account?.controlledAmount ?? 0) }
  }
  const found = await port.address(address)
  return { known: !!found, lovelace: BigInt(found?.lovelace ?? 0) }
}

// ---- giving ----------------------------------------------------------------------------------

/** Ends the transaction that would have given free units, leaving nothing of it. */
class NoFreeUnits extends Error {
  readonly code: FreeUnitsRefusalCode

  constructor(code: FreeUnitsRefusalCode) {
    super(code)
    this.code = code
  }
}

/**
 * In one transaction: the credentials and the address recorded, the key issued with its credit
 * (`wallet:<address>`, unique), the units taken from the day's budget. A credential recorded
 * before, or a spent budget, rolls back all of it.
 */
async function giveFreeUnits(address: string, credentials: string[], config: LaneConfig): Promise<FreeUnits> {
  try {
    return await cds.tx(async (): Promise<FreeUnits> => {
      const now = new Date().toISOString()
      if (!(await recordCredentials(credentials, address, now))) throw new NoFreeUnits('FREE_UNITS_ALREADY_GIVEN')
      // An address given its key before credentials were recorded: they are recorded now, and that is all.
      if (!(await recordAccount(address, now))) return { refused: 'FREE_UNITS_ALREADY_GIVEN' }
      const issued = await insertKey({
        plan: 'trial', units: config.walletFreeUnits, boundAddress: address, label: 'wallet sign-in',
        note: 'wallet sign-in: free calls', reference: `wallet:${address}`,
      })
      await UPDATE.entity(WalletAccounts).set({ firstKey_ID: issued.id }).where({ address })
      if (!(await takeFromDailyBudget(config.walletFreeUnits, config.walletFreeDailyUnits, now))) throw new NoFreeUnits('FREE_UNITS_BUDGET_SPENT')
      return { given: issued }
    })
  } catch (error) {
    if (error instanceof NoFreeUnits) return { refused: error.code }
    throw error
  }
}

/** The address's row (one per address, ever), claimed with ON CONFLICT DO NOTHING so the transaction stays usable on PostgreSQL. */
async function recordAccount(address: string, now: string): Promise<boolean> {
  return (await runWrite(`INSERT INTO ${tableOf(WalletAccounts)} (address, createdAt) VALUES (?, ?) ON CONFLICT DO NOTHING`, [address, now])) === 1
}

// ---- the answer ----------------------------------------------------------------------------

/** What a sign-in answers about free units: how many it got, or why none and how to get units. */
export function freeUnitsAnswer(result: FreeUnits, address: string) {
  if ('given' in result) return { units: result.given.unitsLeft }
  const { publicUrl } = gatewayConfig()
  return {
    units: 0,
    code: result.refused,
    reason: refusalReason(result.refused),
    getUnits: {
      voucher: `POST ${publicUrl}/vouchers/redeem {"code": "<voucher code>"}: without a key it is a new key; with Authorization: Bearer <key> it tops that key up`,
      purchase: `POST ${publicUrl}/keys {"pack": "starter", "payer": "${address}"}: a pack paid in ADA over x402 (packs and prices at GET ${publicUrl}/prices); `
        + 'the key is bound to the paying address, so this session manages it',
    },
  }
}

function refusalReason(code: FreeUnitsRefusalCode): string {
  const config = laneConfig()
  switch (code) {
    case 'FREE_UNITS_OFF':
      return 'This gateway gives no free units'
    case 'FREE_UNITS_ALREADY_GIVEN':
      return 'The free units of this address\'s payment key or stake key were given before, to this address or another of the same keys: a wallet gets them once'
    case 'FREE_UNITS_NOT_ELIGIBLE':
      return `Free units go to addresses ${config.walletFreeHistory ? 'the chain knows (a transaction paid to them) or that hold' : 'that hold'} `
        + `at least ${config.walletFreeMinLovelace} lovelace (a stake address: its account's stake); this one does not`
    case 'FREE_UNITS_BUDGET_SPENT':
      return 'The free units of today (UTC) are given out, for all wallets together; sign in again tomorrow'
    case 'FREE_UNITS_CHAIN_UNAVAILABLE':
      return 'The chain did not answer whether this address qualifies; sign in again later'
  }
}
