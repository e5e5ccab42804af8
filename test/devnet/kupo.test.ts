import fs from 'node:fs'
import path from 'node:path'
import Ajv, { type ValidateFunction } from 'ajv'
import { parse as parseYaml } from 'yaml'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { blake2b, blake2b256Hex, bech32 } from '../../devnet/chain-a/crypto.ts'
import { PROTOCOL_PARAMETERS } from '../../devnet/chain-a/params.ts'
import { exUnitsFee } from '../../srv/chains/chain-a/plutus.ts'
import { ADA, buildTx, getJson, largestUtxo, plutusData, signaturePolicy, startDevnet, unitOf } from '../support/devnet.ts'
import fixture from '../fixtures/plutus/redeemer-equals-datum.plutus.json'

/**
 * The devnet's Kupo HTTP API (/kupo): every endpoint answers what Kupo's published OpenAPI
 * description (v2.12.0) says, over the same ledger as the Blockfrost API, with Kupo's patterns,
 * query flags, filters and errors, and block points that follow a rollback.
 */

const KUPO = '/kupo'
const spec = parseYaml(fs.readFileSync(path.join(__dirname, '../fixtures/openapi/kupo-v2.12.0.yaml'), 'utf8'), { merge: true }) as any

/**
 * The spec's schema for a JSON Schema validator: `$ref`s into the document point into it as ajv
 * holds it (schema `kupo`; metadata are recursive, so references are not inlined). Two readings
 * make the description checkable, without loosening what it says:
 * - its `oneOf`s tell strings apart by `contentEncoding` (an address in bech32 or base16), which
 *   validators do not check, so every string would match several branches; they are read as
 *   `anyOf` (the description's other `oneOf`s have disjoint branches, so nothing else changes);
 * - metadata labels are object keys, always strings, described as `propertyNames: {type: integer}`;
 *   they are checked as integer numerals.
 * Its two pattern schemas' regular expressions (`(*|…)`) do not compile and are left out, as is an
 * empty `title` (documentation only).
 */
function resolved(node: any): any {
  if (Array.isArray(node)) return node.map(item => resolved(item))
  if (!node || typeof node !== 'object') return node
  if (typeof node.$ref === 'string') {
    if (!node.$ref.startsWith('#/components/schemas/')) throw new Error(`unexpected ${node.$ref}`)
    return { $ref: `kupo${node.$ref}` }
  }
  const entries = Object.entries(node).filter(([key]) => key !== 'example' && key !== 'examples').flatMap(([key, value]): [string, any][] => {
    if (key === 'oneOf') return [['anyOf', resolved(value)]]
    if (key === 'propertyNames' && (value as any)?.type === 'integer') return [[key, { type: 'string', pattern: '^-?[0-9]+$' }]]
    if (key === 'pattern' && typeof value === 'string' && !compiles(value)) return []
    if (key === 'title' && typeof value !== 'string') return []
    return [[key, resolved(value)]]
  })
  return Object.fromEntries(entries)
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u')
    return true
  } catch {
    return false
  }
}

const JSON_TYPE = 'application/json;charset=utf-8'
const ajv = new Ajv({ strict: false, allErrors: true })
ajv.addSchema({ $id: 'kupo', components: { schemas: resolved(spec.components.schemas) } })
const validators = new Map<string, ValidateFunction>()

/** The validator of a path's answer, from the spec's response schema for that method, status and content type. */
function validatorFor(route: string, method: string, status: number, contentType = JSON_TYPE): ValidateFunction {
  const key = `${method} ${route} ${status} ${contentType}`
  if (!validators.has(key)) {
    const operation = spec.paths[route]?.[method]
    if (!operation) throw new Error(`the spec has no ${method} ${route}`)
    const schema = operation.responses[String(status)]?.content?.[contentType]?.schema
    if (!schema) throw new Error(`the spec has no ${contentType} answer ${status} for ${method} ${route}`)
    validators.set(key, ajv.compile(resolved(schema)))
  }
  return validators.get(key)!
}

interface Answer { status: number; body: any; text: string; headers: Headers }

async function kupo(route: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(devnet.url + KUPO + route, init)
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch { /* a text answer */ }
  return { status: response.status, body, text, headers: response.headers }
}

/** The spec's path of a route: `/matches/addr…?unspent` is `/matches/{pattern}`. */
function specPath(route: string): string {
  const bare = route.split('?')[0]
  const [, resource, ...rest] = bare.split('/')
  if (rest.length === 0) return `/${resource}`
  const parameter: Record<string, string> = { matches: 'pattern', patterns: 'pattern', datums: 'datum-hash', scripts: 'script-hash', checkpoints: 'slot-no', metadata: 'slot-no' }
  return `/${resource}/{${parameter[resource]}}`
}

/** Calls an endpoint and checks the answer against the spec: status 200, Kupo's content type and a body its schema accepts. */
async function valid(route: string, init: RequestInit & { contentType?: string } = {}): Promise<any> {
  const answer = await kupo(route, init)
  expect({ route, status: answer.status }).toEqual({ route, status: 200 })
  const contentType = init.contentType ?? JSON_TYPE
  expect(answer.headers.get('content-type')).toBe(contentType)
  const validate = validatorFor(specPath(route), (init.method ?? 'get').toLowerCase(), 200, contentType)
  const ok = validate(answer.body)
  expect({ route, errors: ok ? null : validate.errors }).toEqual({ route, errors: null })
  return answer.body
}

/** Calls an endpoint that must refuse: 400 with Kupo's error body `{hint}`. */
async function refused(route: string, init: RequestInit = {}, status = 400) {
  const answer = await kupo(route, init)
  expect({ route, status: answer.status }).toEqual({ route, status })
  expect(answer.headers.get('content-type')).toBe(JSON_TYPE)
  expect(Object.keys(answer.body)).toEqual(['hint'])
  expect(typeof answer.body.hint).toBe('string')
  if (status === 400) {
    const validate = ajv.compile(resolved(spec.components.schemas.BadRequest))
    expect(validate(answer.body)).toBe(true)
  }
}

const blockfrost = async (route: string) => {
  const { status, body } = await getJson(devnet, route)
  expect({ route, status }).toEqual({ route, status: 200 })
  return body
}

const refOf = (match: any) => `${match.transaction_id}#${match.output_index}`
const refsOf = (list: any[]) => list.map(refOf)
const lovelaceOf = (amounts: { unit: string; quantity: string }[]) => amounts.find(a => a.unit === 'lovelace')?.quantity ?? '0'

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
let transferTx: string
let mintTx: string
let lockTx: string
let spendTx: string
let mintedUnit: string
let lockedRef: string
let redeemerHex: string
const inlineDatum = { int: 42 }
const hashDatum = { constructor: 0, fields: [{ bytes: 'cafe' }, { int: 7 }] }
const validator = CSL.PlutusScript.from_bytes_v3(Buffer.from(fixture.cborHex, 'hex'))
const validatorHash = validator.hash().to_hex()
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(validator.hash())).to_address().to_bech32()
const GENEROUS = { mem: 1_000_000, steps: 500_000_000 }
let policy: CSL.NativeScript

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'kupo-test' })
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  devnet.produceBlock()
  // A transfer from wallet 1 to wallet 2, with metadata.
  transferTx = devnet.submit(buildTx({
    inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 7n * ADA }], signers: [w1.payment],
    metadata: { 674: { msg: ['kupo on the devnet'] } },
  }))
  devnet.produceBlock()
  // Wallet 1 mints an asset under its signature policy (CIP-25 metadata) and sends it to wallet 2.
  policy = signaturePolicy(w1.payment)
  mintedUnit = unitOf(policy, 'KUPO')
  mintTx = devnet.submit(buildTx({
    inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 2n * ADA, assets: new Map([[mintedUnit, 500n]]) }],
    mint: [{ policy, name: 'KUPO', quantity: 1000n }], signers: [w1.payment],
    metadata: { 721: { [policy.hash().to_hex()]: { KUPO: { name: 'Kupo', image: 'ipfs://kupo' } } }, 42: [1, -2, 'three'] },
  }))
  devnet.produceBlock()
  // Script outputs: one with an inline datum, one with a datum hash (its datum in the witness set), and a reference script.
  lockTx = devnet.submit(buildTx({
    inputs: [largestUtxo(devnet, w1.address)],
    outputs: [
      { address: scriptAddress, coin: 10n * ADA, datum: { inline: plutusData(inlineDatum) } },
      { address: scriptAddress, coin: 10n * ADA, datum: { hash: plutusData(hashDatum) } },
      { address: w1.address, coin: 20n * ADA, scriptRef: validator },
    ],
    datums: [plutusData(hashDatum)], signers: [w1.payment],
  }))
  devnet.produceBlock()
  // The inline-datum output is spent with the validator as a reference script.
  lockedRef = `${lockTx}#0`
  const ledger = devnet.ledger
  const locked = ledger.outputs.get(lockedRef)!
  const reference = ledger.outputs.get(`${lockTx}#2`)!
  const [funding, collateral] = ledger.unspentAt(w1.address).filter(o => o.value.assets.size === 0 && !o.referenceScript).sort((a, b) => Number(b.value.coin - a.value.coin))
  const index = [locked.ref, funding.ref].sort((a, b) => (a.split('#')[0] === b.split('#')[0] ? Number(a.split('#')[1]) - Number(b.split('#')[1]) : a < b ? -1 : 1)).indexOf(locked.ref)
  redeemerHex = plutusData(inlineDatum).to_hex()
  const spend = (fee?: bigint) => buildTx({
    inputs: [locked, funding], outputs: [{ address: w2.address, coin: 5n * ADA }], change: w1.address, referenceInputs: [reference],
    redeemers: [{ tag: 'spend', index, data: plutusData(inlineDatum), ...GENEROUS }], collateral: [collateral], signers: [w1.payment], fee,
  })
  const fee = 44n * BigInt(spend().length + 10) + 155_381n + exUnitsFee(GENEROUS, PROTOCOL_PARAMETERS) + 15n * BigInt(validator.bytes().length)
  spendTx = devnet.submit(spend(fee))
  devnet.produceBlock()
  devnet.produceBlock()
})
afterAll(() => devnet.stop())

it('checks answers against schemas that refuse what the description does not allow', async () => {
  const validate = validatorFor('/matches', 'get', 200)
  const [match] = await valid(`/matches/0@${lockTx}`)
  expect(validate([match])).toBe(true)
  const { spent_at: _spentAt, ...withoutSpentAt } = match
  expect(validate([withoutSpentAt])).toBe(false)
  expect(validate([{ ...match, value: { coins: '1' } }])).toBe(false)
  expect(validate([{ ...match, datum_type: 'reference' }])).toBe(false)
  const metadata = validatorFor('/metadata/{slot-no}', 'get', 200)
  const item = { hash: '00'.repeat(32), raw: 'a0', schema: { 1: { int: 1 } } }
  expect(metadata([item])).toBe(true)
  expect(metadata([{ ...item, schema: { one: { int: 1 } } }])).toBe(false)
  expect(metadata([{ ...item, schema: { 1: { list: [{ float: 1.5 }] } } }])).toBe(false)
})

describe('GET /matches: every output of the chain, spent or not, in Kupo\'s shape', () => {
  it('answers all matches, most recent first, each as the schema describes', async () => {
    const all = await valid('/matches')
    expect(all).toHaveLength(devnet.ledger.outputs.size)
    const points = all.map((m: any) => [m.created_at.slot_no, m.transaction_index, m.output_index])
    const sorted = [...points].sort((a, b) => b[0] - a[0] || b[1] - a[1] || b[2] - a[2])
    expect(points).toEqual(sorted)
    expect(refsOf(await valid('/matches/*'))).toEqual(refsOf(all))
    expect(refsOf(await valid('/matches?order=oldest_first'))).toEqual(refsOf(all).reverse())
    expect(refsOf(await valid('/matches?order=most_recent_first'))).toEqual(refsOf(all))
  })

  it('a wallet\'s unspent matches are its Blockfrost UTxOs, with the same values and blocks', async () => {
    const matches = await valid(`/matches/${w2.address}?unspent`)
    const utxos = await blockfrost(`/addresses/${w2.address}/utxos`)
    expect(refsOf(matches).sort()).toEqual(utxos.map((u: any) => `${u.tx_hash}#${u.output_index}`).sort())
    for (const utxo of utxos) {
      const match = matches.find((m: any) => refOf(m) === `${utxo.tx_hash}#${utxo.output_index}`)
      const block = await blockfrost(`/blocks/${utxo.block}`)
      expect(match).toMatchObject({ address: w2.address, created_at: { slot_no: block.slot, header_hash: block.hash }, spent_at: null })
      expect(String(match.value.coins)).toBe(lovelaceOf(utxo.amount))
      const assets = Object.fromEntries(utxo.amount.filter((a: any) => a.unit !== 'lovelace').map((a: any) => [`${a.unit.slice(0, 56)}.${a.unit.slice(56)}`, Number(a.quantity)]))
      expect(match.value.assets).toEqual(assets)
      const tx = await blockfrost(`/txs/${utxo.tx_hash}`)
      expect(match.transaction_index).toBe(tx.index)
    }
    expect(matches.some((m: any) => m.value.assets[`${mintedUnit.slice(0, 56)}.${mintedUnit.slice(56)}`] === 500)).toBe(true)
  })

  it('a spent output tells where it was spent: the spending transaction\'s block, its input index and redeemer', async () => {
    const [match] = await valid(`/matches/0@${lockTx}`)
    const tx = await blockfrost(`/txs/${spendTx}`)
    const inputs = (await blockfrost(`/txs/${spendTx}/utxos`)).inputs.filter((i: any) => !i.collateral && !i.reference).map((i: any) => `${i.tx_hash}#${i.output_index}`)
    expect(match.spent_at).toEqual({
      slot_no: tx.slot, header_hash: tx.block, transaction_id: spendTx, input_index: [...inputs].sort().indexOf(lockedRef), redeemer: redeemerHex,
    })
    // A key-locked input is spent without a redeemer.
    const spentByTransfer = (await valid('/matches?spent')).find((m: any) => m.spent_at.transaction_id === transferTx)
    const transfer = await blockfrost(`/txs/${transferTx}`)
    expect(spentByTransfer.spent_at).toMatchObject({ slot_no: transfer.slot, header_hash: transfer.block, input_index: 0, redeemer: null })
  })

  it('datums, datum types and script hashes of the script outputs; ?resolve_hashes adds the datum and script', async () => {
    const outputs = (await blockfrost(`/txs/${lockTx}/utxos`)).outputs
    const matches = await valid(`/matches/*@${lockTx}?order=oldest_first`)
    expect(matches.map((m: any) => m.output_index)).toEqual([0, 1, 2, 3])
    expect(matches[0]).toMatchObject({ address: scriptAddress, datum_hash: blake2b256Hex(Buffer.from(outputs[0].inline_datum, 'hex')), datum_type: 'inline', script_hash: null })
    expect(matches[1]).toMatchObject({ address: scriptAddress, datum_hash: outputs[1].data_hash, datum_type: 'hash', script_hash: null })
    expect(matches[2]).toMatchObject({ address: w1.address, datum_hash: null, script_hash: outputs[2].reference_script_hash })
    expect(matches[2].script_hash).toBe(validatorHash)
    expect('datum_type' in matches[2]).toBe(false)
    expect('datum' in matches[0]).toBe(false)

    const resolvedMatches = await valid(`/matches/*@${lockTx}?order=oldest_first&resolve_hashes`)
    expect(resolvedMatches[0]).toMatchObject({ datum: outputs[0].inline_datum, script: null })
    expect(resolvedMatches[1]).toMatchObject({ datum: plutusData(hashDatum).to_hex(), script: null })
    expect(resolvedMatches[2]).toMatchObject({ datum: null, script: { language: 'plutus:v3', script: Buffer.from(validator.bytes()).toString('hex') } })
  })

  it('quantities as strings with Accept: application/json;asset-quantity=string', async () => {
    const contentType = `${JSON_TYPE};asset-quantity=string`
    const matches = await valid(`/matches/${mintedUnit.slice(0, 56)}.*`, { headers: { Accept: 'application/json;asset-quantity=string' }, contentType })
    expect(matches.length).toBeGreaterThan(0)
    for (const match of matches) {
      expect(typeof match.value.coins).toBe('string')
      expect(Object.values(match.value.assets).every(q => typeof q === 'string')).toBe(true)
    }
  })

  it('?spent and ?unspent split the matches; both at once is refused', async () => {
    const all = await valid('/matches')
    const spent = await valid('/matches?spent')
    const unspent = await valid('/matches?unspent')
    expect(spent.every((m: any) => m.spent_at !== null)).toBe(true)
    expect(unspent.every((m: any) => m.spent_at === null)).toBe(true)
    expect(spent.length + unspent.length).toBe(all.length)
    expect(spent.length).toBeGreaterThan(0)
    const ledger = devnet.ledger
    expect(refsOf(unspent).sort()).toEqual([...ledger.outputs.values()].filter(o => !o.spentBy).map(o => o.ref).sort())
    await refused('/matches?spent&unspent')
    await refused('/matches?spent=yes')
  })

  it('created_after/created_before and spent_after/spent_before bound the slots, inclusively, by slot or by point', async () => {
    const all = await valid('/matches?order=oldest_first')
    const lock = await blockfrost(`/txs/${lockTx}`)
    const spend = await blockfrost(`/txs/${spendTx}`)
    const createdFrom = await valid(`/matches?created_after=${lock.slot}&order=oldest_first`)
    expect(refsOf(createdFrom)).toEqual(refsOf(all.filter((m: any) => m.created_at.slot_no >= lock.slot)))
    expect(refsOf(createdFrom)).toContain(lockedRef)
    const createdTo = await valid(`/matches?created_before=${lock.slot}&order=oldest_first`)
    expect(refsOf(createdTo)).toEqual(refsOf(all.filter((m: any) => m.created_at.slot_no <= lock.slot)))
    const exactly = await valid(`/matches?created_after=${lock.slot}.${lock.block}&created_before=${lock.slot}.${lock.block}`)
    expect(refsOf(exactly).sort()).toEqual([0, 1, 2, 3].map(i => `${lockTx}#${i}`))
    const spentThen = await valid(`/matches?spent_after=${spend.slot}&spent_before=${spend.slot}`)
    expect(refsOf(spentThen).sort()).toEqual((await blockfrost(`/txs/${spendTx}/utxos`)).inputs.filter((i: any) => !i.reference && !i.collateral).map((i: any) => `${i.tx_hash}#${i.output_index}`).sort())
    expect(spentThen.every((m: any) => m.spent_at.slot_no === spend.slot)).toBe(true)
    // At most one lower and one upper bound; a point must be on the chain.
    await refused(`/matches?created_after=1&spent_after=1`)
    await refused(`/matches?created_before=1&spent_before=1`)
    await refused(`/matches?created_after=${lock.slot}.${'00'.repeat(32)}`)
    await refused('/matches?created_after=yesterday')
  })

  it('policy_id / asset_name and transaction_id / output_index filters', async () => {
    const policyId = mintedUnit.slice(0, 56)
    const byPolicy = await valid(`/matches?policy_id=${policyId}`)
    expect(refsOf(byPolicy).sort()).toEqual((await valid(`/matches/${policyId}.*`)).map(refOf).sort())
    expect(byPolicy.length).toBeGreaterThan(0)
    expect(refsOf(await valid(`/matches?policy_id=${policyId}&asset_name=${mintedUnit.slice(56)}`)).sort()).toEqual(refsOf(byPolicy).sort())
    expect(await valid(`/matches?policy_id=${policyId}&asset_name=00`)).toEqual([])
    expect(refsOf(await valid(`/matches?transaction_id=${lockTx}&output_index=1`))).toEqual([`${lockTx}#1`])
    expect(refsOf(await valid(`/matches/${scriptAddress}?transaction_id=${lockTx}`)).sort()).toEqual([`${lockTx}#0`, `${lockTx}#1`])
    await refused(`/matches?asset_name=${mintedUnit.slice(56)}`)
    await refused('/matches?policy_id=zz')
    await refused('/matches?output_index=1')
    await refused(`/matches?transaction_id=${lockTx.slice(2)}`)
    await refused('/matches?order=newest')
  })
})

describe('Kupo\'s patterns', () => {
  const unspentRefs = async (pattern: string) => refsOf(await valid(`/matches/${pattern}?unspent`)).sort()

  it('addresses in bech32 and base16, and Byron addresses in base58', async () => {
    const bech = await unspentRefs(w2.address)
    expect(bech.length).toBeGreaterThan(0)
    expect(await unspentRefs(Buffer.from(CSL.Address.from_bech32(w2.address).to_bytes()).toString('hex'))).toEqual(bech)
    const byron = CSL.ByronAddress.icarus_from_key(CSL.Bip32PrivateKey.from_bip39_entropy(new Uint8Array(16), new Uint8Array()).to_public(), 1097911063).to_base58()
    expect(await valid(`/matches/${byron}`)).toEqual([])
  })

  it('payment credentials: key hash in hex and bech32, public key in hex and bech32, script hash', async () => {
    const key = w1.payment.to_public()
    const hash = key.hash().to_hex()
    const expected = [...devnet.ledger.outputs.values()].filter(o => !o.spentBy && o.payment?.hash === hash).map(o => o.ref).sort()
    expect(expected.length).toBeGreaterThan(0)
    expect(await unspentRefs(`${hash}/*`)).toEqual(expected)
    expect(await unspentRefs(`${key.hash().to_bech32('addr_vkh')}/*`)).toEqual(expected)
    expect(await unspentRefs(`${Buffer.from(key.as_bytes()).toString('hex')}/*`)).toEqual(expected)
    expect(await unspentRefs(`${bech32('addr_vk', key.as_bytes())}/*`)).toEqual(expected)
    expect(await unspentRefs(`${bech32('script', validator.hash().to_bytes())}/*`)).toEqual([`${lockTx}#1`])
    expect(refsOf(await valid(`/matches/${validatorHash}/*`)).sort()).toEqual([`${lockTx}#0`, `${lockTx}#1`])
  })

  it('delegation credentials and stake addresses, and */* for every Shelley address', async () => {
    const stakeHash = w2.stake.to_public().hash()
    const expected = [...devnet.ledger.outputs.values()].filter(o => !o.spentBy && o.stakeAddress === w2.stakeAddress).map(o => o.ref).sort()
    expect(expected.length).toBeGreaterThan(0)
    expect(await unspentRefs(`*/${stakeHash.to_hex()}`)).toEqual(expected)
    expect(await unspentRefs(`*/${stakeHash.to_bech32('stake_vkh')}`)).toEqual(expected)
    expect(await unspentRefs(w2.stakeAddress)).toEqual(expected)
    const paymentHash = w2.payment.to_public().hash().to_hex()
    expect(await unspentRefs(`${paymentHash}/${stakeHash.to_hex()}`)).toEqual(await unspentRefs(w2.address))
    expect(await unspentRefs(`${paymentHash}/${w1.stake.to_public().hash().to_hex()}`)).toEqual([])
    // Every devnet address is a Shelley one.
    expect(await unspentRefs('*/*')).toEqual(await unspentRefs('*'))
  })

  it('output references and asset ids', async () => {
    expect(refsOf(await valid(`/matches/2@${lockTx}`))).toEqual([`${lockTx}#2`])
    expect(await valid(`/matches/9@${lockTx}`)).toEqual([])
    expect(refsOf(await valid(`/matches/*@${mintTx}`)).sort()).toEqual((await blockfrost(`/txs/${mintTx}/utxos`)).outputs.map((o: any) => `${mintTx}#${o.output_index}`).sort())
    const holders = await valid(`/matches/${mintedUnit.slice(0, 56)}.${mintedUnit.slice(56)}?unspent`)
    const addresses = await blockfrost(`/assets/${mintedUnit}/addresses`)
    expect([...new Set(holders.map((m: any) => m.address))].sort()).toEqual(addresses.map((a: any) => a.address).sort())
    const total = holders.reduce((sum: number, m: any) => sum + m.value.assets[`${mintedUnit.slice(0, 56)}.${mintedUnit.slice(56)}`], 0)
    expect(String(total)).toBe((await blockfrost(`/assets/${mintedUnit}`)).quantity)
    expect(refsOf(await valid(`/matches/${mintedUnit.slice(0, 56)}.*?unspent`)).sort()).toEqual(refsOf(holders).sort())
  })

  it('refuses what is not a pattern (or a pattern only for indexing) with 400 and a hint', async () => {
    for (const bad of ['nope', '{25}', 'abc.def', `${mintedUnit.slice(0, 56)}.abc`, '1@zz', `x@${lockTx}`, 'addr_vkh1qqqq/*', 'a/b', `*/*/*`, `${'ab'.repeat(30)}/*`]) {
      await refused(`/matches/${bad}`)
    }
  })
})

describe('datums, scripts and metadata', () => {
  it('GET /datums/{hash}: inline datums and datums from the witness set; null when unknown; 400 when malformed', async () => {
    const outputs = (await blockfrost(`/txs/${lockTx}/utxos`)).outputs
    const inlineHash = blake2b256Hex(Buffer.from(outputs[0].inline_datum, 'hex'))
    expect(await valid(`/datums/${inlineHash}`)).toEqual({ datum: outputs[0].inline_datum })
    expect(await valid(`/datums/${outputs[1].data_hash}`)).toEqual({ datum: plutusData(hashDatum).to_hex() })
    expect(blake2b256Hex(Buffer.from(plutusData(hashDatum).to_hex(), 'hex'))).toBe(outputs[1].data_hash)
    expect(await valid(`/datums/${'00'.repeat(32)}`)).toBeNull()
    await refused('/datums/abc')
  })

  it('GET /scripts/{hash}: a reference script and a native script; null when unknown; 400 when malformed', async () => {
    const plutus = await valid(`/scripts/${validatorHash}`)
    expect(plutus).toEqual({ language: 'plutus:v3', script: Buffer.from(validator.bytes()).toString('hex') })
    // The script is what the hash is taken over, after its language's discriminator byte.
    expect(Buffer.from(blake2b(Buffer.concat([Buffer.from([3]), Buffer.from(plutus.script, 'hex')]), 28)).toString('hex')).toBe(validatorHash)
    const native = await valid(`/scripts/${policy.hash().to_hex()}`)
    expect(native).toEqual({ language: 'native', script: policy.to_hex() })
    expect(Buffer.from(blake2b(Buffer.concat([Buffer.from([0]), Buffer.from(native.script, 'hex')]), 28)).toString('hex')).toBe(policy.hash().to_hex())
    expect(await valid(`/scripts/${'00'.repeat(28)}`)).toBeNull()
    await refused('/scripts/xyz')
  })

  it('GET /metadata/{slot}: the metadata of the block\'s transactions, as Blockfrost has them', async () => {
    const mint = await blockfrost(`/txs/${mintTx}`)
    const answer = await kupo(`/metadata/${mint.slot}`)
    expect(answer.headers.get('x-block-header-hash')).toBe(mint.block)
    const list = await valid(`/metadata/${mint.slot}`)
    expect(list).toHaveLength(1)
    const [metadata] = list
    expect(metadata.hash).toBe(blake2b256Hex(Buffer.from(metadata.raw, 'hex')))
    expect(CSL.hash_auxiliary_data(CSL.AuxiliaryData.from_hex(metadata.raw)).to_hex()).toBe(metadata.hash)
    const labels = (await blockfrost(`/txs/${mintTx}/metadata`)).map((m: any) => m.label)
    expect(Object.keys(metadata.schema).sort()).toEqual(labels.sort())
    expect(metadata.schema['42']).toEqual({ list: [{ int: 1 }, { int: -2 }, { string: 'three' }] })
    const cip25 = metadata.schema['721'].map[0]
    expect(cip25.k).toEqual({ string: policy.hash().to_hex() })

    const transfer = await blockfrost(`/txs/${transferTx}`)
    const [message] = await valid(`/metadata/${transfer.slot}?transaction_id=${transferTx}`)
    expect(message.schema).toEqual({ 674: { map: [{ k: { string: 'msg' }, v: { list: [{ string: 'kupo on the devnet' }] } }] } })
    expect(await valid(`/metadata/${transfer.slot}?transaction_id=${mintTx}`)).toEqual([])
    expect(await valid(`/metadata/${(await blockfrost(`/txs/${lockTx}`)).slot}`)).toEqual([])
    await refused('/metadata/slot')
    await refused(`/metadata/${transfer.slot}?transaction_id=abc`)
    await refused(`/metadata/${transfer.slot}?policy_id=${mintedUnit.slice(0, 56)}`)
  })
})

describe('health, checkpoints and patterns', () => {
  it('GET /health in JSON and for Prometheus', async () => {
    const latest = await blockfrost('/blocks/latest')
    const health = await valid('/health')
    expect(health).toMatchObject({ connection_status: 'connected', most_recent_checkpoint: latest.slot, most_recent_node_tip: latest.slot, network_synchronization: 1, configuration: { indexes: 'installed' } })
    const text = await valid('/health', { headers: { Accept: 'text/plain' }, contentType: 'text/plain;charset=utf-8' })
    expect(text).toContain(`kupo_most_recent_checkpoint  ${latest.slot}`)
    expect(text).toContain('kupo_connection_status  1.0')
    expect((await kupo('/health', { headers: { Accept: 'image/png' } })).status).toBe(406)
  })

  it('GET /checkpoints and /checkpoints/{slot} (?strict) are the chain\'s blocks', async () => {
    const checkpoints = await valid('/checkpoints')
    const latest = await blockfrost('/blocks/latest')
    expect(checkpoints[0]).toEqual({ slot_no: latest.slot, header_hash: latest.hash })
    expect(checkpoints.map((c: any) => c.slot_no)).toEqual([...checkpoints.map((c: any) => c.slot_no)].sort((a, b) => b - a))
    for (const checkpoint of checkpoints) expect((await blockfrost(`/blocks/slot/${checkpoint.slot_no}`)).hash).toBe(checkpoint.header_hash)
    const lock = await blockfrost(`/txs/${lockTx}`)
    expect(await valid(`/checkpoints/${lock.slot}?strict`)).toEqual({ slot_no: lock.slot, header_hash: lock.block })
    const next = await blockfrost(`/blocks/${lock.block}/next?count=1`)
    if (next[0].slot > lock.slot + 1) expect(await valid(`/checkpoints/${lock.slot + 1}?strict`)).toBeNull()
    expect(await valid(`/checkpoints/${next[0].slot - 1}`)).toEqual({ slot_no: lock.slot, header_hash: lock.block })
    expect(await valid(`/checkpoints/${latest.slot + 1000}?strict`)).toBeNull()
    await refused('/checkpoints/abc')
    await refused(`/checkpoints/${lock.slot}?order=oldest_first`)
  })

  it('answers carry the most recent checkpoint and an ETag; If-None-Match gives 304', async () => {
    const latest = await blockfrost('/blocks/latest')
    const answer = await kupo('/matches/*@' + lockTx)
    expect(answer.headers.get('x-most-recent-checkpoint')).toBe(String(latest.slot))
    expect(answer.headers.get('etag')).toBe(latest.hash)
    expect((await kupo('/matches/*@' + lockTx, { headers: { 'If-None-Match': latest.hash } })).status).toBe(304)
  })

  it('patterns: the devnet indexes everything ("*"); adding one changes nothing, "*" cannot be removed', async () => {
    expect(await valid('/patterns')).toEqual(['*'])
    expect(await valid(`/patterns/${w1.address}`)).toEqual(['*'])
    expect(await valid('/patterns/{25}')).toEqual(['*'])
    const lock = await blockfrost(`/txs/${lockTx}`)
    const body = JSON.stringify({ rollback_to: { slot_no: lock.slot, header_hash: lock.block } })
    expect(await valid(`/patterns/${validatorHash}/*`, { method: 'PUT', body, headers: { 'Content-Type': 'application/json' } })).toEqual(['*'])
    expect(await valid('/patterns', { method: 'PUT', body: JSON.stringify({ patterns: ['*/*'], rollback_to: { slot_no: lock.slot } }) })).toEqual(['*'])
    await refused(`/patterns/${validatorHash}/*`, { method: 'PUT', body: JSON.stringify({ rollback_to: { slot_no: lock.slot, header_hash: '00'.repeat(32) } }) })
    await refused(`/patterns/${validatorHash}/*`, { method: 'PUT', body: 'not json' })
    await refused('/patterns/nope', { method: 'PUT', body })
    expect(await valid(`/patterns/${w1.address}`, { method: 'DELETE' })).toEqual({ deleted: 0 })
    await refused('/patterns/*', { method: 'DELETE' })
    await refused('/patterns/nope')
    await refused(`/matches/${w1.address}`, { method: 'DELETE' })
  })

  it('unknown paths are 404, other methods 406, both with a hint', async () => {
    await refused('/nothing', {}, 404)
    await refused('/datums', {}, 404)
    await refused('/matches', { method: 'POST' }, 406)
    await refused('/health', { method: 'DELETE' }, 406)
  })
})

describe('rollbacks', () => {
  it('matches follow the chain: rolled-back outputs leave, the fork\'s blocks give their points', async () => {
    const local = await startDevnet({ seed: 'kupo-rollback' })
    try {
      const [a, b] = [local.walletKeys('wallet-1'), local.walletKeys('wallet-2')]
      local.produceBlock()
      const tx = local.submit(buildTx({ inputs: [largestUtxo(local, a.address)], outputs: [{ address: b.address, coin: 3n * ADA }], signers: [a.payment] }))
      const first = local.produceBlock()
      const get = async (route: string) => (await (await fetch(`${local.url}${KUPO}${route}`)).json()) as any
      const [created] = await get(`/matches/0@${tx}`)
      expect(created.created_at).toEqual({ slot_no: first.slot, header_hash: first.hash })
      const spent = (await get('/matches?spent')).filter((m: any) => m.spent_at.transaction_id === tx)
      expect(spent.length).toBeGreaterThan(0)
      expect(spent[0].spent_at).toMatchObject({ slot_no: first.slot, header_hash: first.hash })

      local.rollBack(1)
      expect(await get(`/matches/*@${tx}`)).toEqual([])
      expect((await get('/matches?spent')).filter((m: any) => m.spent_at.transaction_id === tx)).toEqual([])
      expect((await get('/checkpoints'))[0].header_hash).not.toBe(first.hash)
      expect(await get(`/checkpoints/${first.slot}?strict`)).toBeNull()

      const fork = local.produceBlock()
      expect(fork.txs).toEqual([tx])
      const [again] = await get(`/matches/0@${tx}`)
      expect(again.created_at).toEqual({ slot_no: fork.slot, header_hash: fork.hash })
      expect(fork.hash).not.toBe(first.hash)
      const respent = (await get('/matches?spent')).filter((m: any) => m.spent_at.transaction_id === tx)
      expect(respent[0].spent_at).toMatchObject({ slot_no: fork.slot, header_hash: fork.hash })
    } finally {
      await local.stop()
    }
  })
})
