import type { Findings } from './findings.ts'
import { send, type Probe } from './http.ts'
import type { Metered, Target } from './target.ts'

/**
 * The fuzz key's account after the attack: once the commits have settled, units left must equal
 * the issued units minus what the answers said they charged, every committed charge must belong to
 * an answer that charged exactly that, refused calls must be refunded, and nothing is charged twice.
 * Reservations of requests that died with the process stay pending (the sweeper voids them later).
 */

interface Entry {
  kind: string
  state: string
  units: number
  requestId: string | null
  route: string | null
}

const PROBE: Probe = { name: 'metering of the fuzz key', group: 'metering', kinds: [], method: 'GET', target: '/me/ledger' }

async function getJson(target: Target, path: string): Promise<any> {
  const result = await send(target.url, target.key, { ...PROBE, target: path })
  if (!('answer' in result)) throw new Error(`GET ${path}: ${result.error}`)
  if (result.answer.status !== 200) throw new Error(`GET ${path}: ${result.answer.status} ${result.answer.body.slice(0, 300)}`)
  return JSON.parse(result.answer.body)
}

export async function ledgerOf(target: Target): Promise<Entry[]> {
  const entries: Entry[] = []
  let before: string | null = null
  do {
    const page: { value: Entry[]; next: string | null } = await getJson(target, `/me/ledger?limit=200${before ? `&before=${before}` : ''}`)
    entries.push(...page.value)
    before = page.next
  } while (before)
  return entries
}

export async function checkMetering(target: Target, findings: Findings): Promise<string> {
  const answers = new Map(target.metered.map(metered => [metered.requestId, metered]))
  const settles = (entry: Entry, answer?: Metered) => entry.kind === 'charge' && entry.state === 'pending' && !!answer && !target.ended(answer.generation)
  let entries = await ledgerOf(target)
  for (let tries = 0; tries < 40 && entries.some(entry => settles(entry, answers.get(entry.requestId ?? ''))); tries++) {
    await new Promise(resolve => setTimeout(resolve, 250))
    entries = await ledgerOf(target)
  }
  const fail = (title: string, detail: string) => findings.add(PROBE, title, detail)
  const charges = entries.filter(entry => entry.kind === 'charge')
  const seen = new Set<string>()
  /** Units still reserved that no answer said it charged (the request died with the process, or its answer said 0). */
  let reserved = 0
  /** Charges an answer said it made whose commit the dying process never wrote. */
  let uncommitted = 0
  for (const charge of charges) {
    const requestId = charge.requestId ?? ''
    if (seen.has(requestId)) fail('a request was charged twice', `request ${requestId} (${charge.route})`)
    seen.add(requestId)
    const answer = answers.get(requestId)
    const route = `${charge.route} (request ${requestId})`
    if (charge.state === 'pending') {
      if (answer && !target.ended(answer.generation)) fail('a charge stayed pending after its answer', `${route}: answered ${answer.status}`)
      if (answer?.charged === -charge.units) uncommitted++
      else reserved += -charge.units
      continue
    }
    if (!answer) {
      if (charge.state === 'committed') fail('a request that got no answer was charged', route)
      continue
    }
    if (charge.state === 'committed' && answer.charged !== -charge.units) fail('a committed charge differs from what its answer said', `${route}: committed ${-charge.units}, the ${answer.status} answer said x-access-units-charged: ${answer.charged}`)
    if (charge.state === 'refunded' && answer.charged !== 0) fail('a refunded call had said it was charged', `${route}: the ${answer.status} answer said x-access-units-charged: ${answer.charged}`)
  }
  const charged = target.metered.filter(answer => answer.charged > 0).length
  const committed = charges.filter(charge => charge.state === 'committed').length
  if (committed + uncommitted !== charged) fail('the number of committed charges differs from the answers that charged', `${committed} committed (+${uncommitted} left pending by a dying process), ${charged} answers charged > 0`)
  const account = await getJson(target, '/me')
  const expected = target.options.units - target.chargedTotal - reserved
  if (account.unitsLeft !== expected) {
    fail('units left differ from the issued units minus the charged headers', `unitsLeft ${account.unitsLeft}, expected ${expected} = ${target.options.units} issued − ${target.chargedTotal} charged − ${reserved} still reserved by requests whose process died`)
  }
  if (uncommitted) findings.notes.push(`${uncommitted} charge(s) of answered calls stayed pending: the process died before committing them (the sweeper voids them)`)
  if (reserved) findings.notes.push(`${reserved} units stay reserved by requests that got no answer or answered while the process was dying (the sweeper voids them)`)
  return `ledger: ${charges.length} charges (${committed} committed), ${target.chargedTotal} units charged by ${charged} answers, ${account.unitsLeft} left`
}
