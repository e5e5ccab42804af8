import { send } from './http.ts'
import { parseMetadata, servedServices, type EntitySet, type Service } from './metadata.ts'
import { operationProbe, setProbe } from './requests.ts'
import { validArguments } from './cases.ts'
import type { Runner } from './runner.ts'
import type { Target } from './target.ts'
import type { Pools } from './values.ts'

/**
 * What the suite learns from the running server before it attacks: the served services and their
 * metadata, and real values to start from (the devnet's wallets, pools, DReps, assets and blocks,
 * rows of every entity set, and what a valid-looking call of every operation answers).
 */

/**
 * The services the key reaches. The operator's service refuses every key (403 OPERATOR_ONLY): it is
 * left out here, since no request with the key gets past that refusal (test/operator/hosted.test.ts
 * sends a key of every plan to every spelling of it).
 */
export async function discoverServices(target: Target): Promise<Service[]> {
  const served = servedServices(target.startLog)
  if (!served.length) throw new Error(`the server logged no served OData service:\n${target.startLog.slice(-3000)}`)
  // One at a time, each given long: CAP compiles each $metadata on first use, which on a busy machine
  // takes far longer than a probe's answer may (it is no probe).
  const services: (Service | undefined)[] = []
  for (const { name, path } of served) {
    const result = await send(target.url, target.key, { name: `${name} $metadata`, group: name, kinds: [], method: 'GET', target: `${path}/$metadata`, timeoutMs: 120_000 })
    if ('answer' in result && result.answer.status === 403 && /"OPERATOR_ONLY"/.test(result.answer.body)) continue
    if (!('answer' in result) || result.answer.status !== 200) throw new Error(`GET ${path}/$metadata: ${'answer' in result ? result.answer.status : result.error}`)
    services.push(parseMetadata(name, path, result.answer.body))
  }
  return services.filter((service): service is Service => service !== undefined)
}

/** The devnet's test wallets (`npm run devnet -- wallets`): addresses, stake addresses, key hashes. */
export async function harvestWallets(target: Target, pools: Pools) {
  const output = await target.cli('devnet', 'wallets')
  for (const wallet of JSON.parse(output.slice(output.indexOf('['))) as Record<string, string>[]) {
    pools.add('address', wallet.address)
    pools.add('stakeAddress', wallet.stakeAddress)
    pools.add('keyHash', wallet.paymentKeyHash)
  }
}

/** Pool ids, DRep ids, asset units, block and transaction hashes, straight from the devnet's Blockfrost API. */
export async function harvestDevnet(log: string, pools: Pools) {
  const url = [...log.matchAll(/devnet serving a Blockfrost-compatible API at (http:\/\/\S+)/g)].pop()?.[1]
  if (!url) return
  const get = async (path: string): Promise<any> => {
    try {
      const response = await fetch(url + path)
      return response.ok ? await response.json() : undefined
    } catch {
      return undefined
    }
  }
  const [poolIds, dreps, assets, latest, txs] = await Promise.all([get('/pools'), get('/governance/dreps'), get('/assets?count=20'), get('/blocks/latest'), get('/blocks/latest/txs')])
  for (const id of poolIds ?? []) pools.add('poolId', id)
  for (const drep of dreps ?? []) pools.add('drepId', drep.drep_id)
  for (const asset of assets ?? []) pools.add('assetUnit', asset.asset)
  if (latest?.hash) pools.add('blockHash', latest.hash)
  if (latest?.previous_block) pools.add('blockHash', latest.previous_block)
  for (const hash of txs ?? []) pools.add('txHash', hash)
}

const setNameOf = (context: unknown) => (typeof context === 'string' ? (context.split('#')[1] ?? '').split(/[/(]/)[0].split('.').pop() ?? '' : '')

function keep(pools: Pools, sets: EntitySet[], body: string) {
  let parsed: any
  try {
    parsed = JSON.parse(body)
  } catch {
    return
  }
  const setName = setNameOf(parsed?.['@odata.context'])
  pools.harvest(parsed, setName)
  const set = sets.find(s => s.name === setName)
  if (!set?.keys.length) return
  for (const row of Array.isArray(parsed.value) ? parsed.value : [parsed]) {
    if (set.keys.every(key => row?.[key.name] !== undefined && row[key.name] !== null)) pools.addKey(set.name, Object.fromEntries(set.keys.map(key => [key.name, row[key.name]])))
  }
}

/** Reads every entity set and calls every operation with valid-looking values, keeping what comes back. */
export async function harvestThroughApi(runner: Runner, services: Service[], pools: Pools) {
  const sets = services.flatMap(s => s.entitySets)
  const readSets = async () => {
    for (const set of sets) {
      const answer = await runner.probe(setProbe(set, '', [['$top', '20']], 'harvest: first rows', []))
      if (answer?.status === 200) keep(pools, sets, answer.body)
    }
  }
  await readSets()
  let pending = services.flatMap(s => s.operations)
  for (let pass = 0; pass < 2 && pending.length; pass++) {
    const failed = []
    for (const op of pending) {
      const answer = await runner.probe(operationProbe(op, validArguments(op, pools), 'harvest: valid-looking call', []))
      if (answer?.status === 200) keep(pools, sets, answer.body)
      else failed.push(op)
    }
    pending = failed
  }
  await readSets()
}
