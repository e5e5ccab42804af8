import fs from 'node:fs'
import ts from 'typescript'
import Ajv, { type ValidateFunction } from 'ajv'
import WebSocket from 'ws'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import {
  createChainSynchronizationClient, createInteractionContext, createLedgerStateQueryClient, createTransactionSubmissionClient,
  type InteractionContext,
} from '@cardano-ogmios/client'
import type { Schema } from '@cardano-ogmios/client'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { parse as parseJson } from '../../devnet/chain-a/ogmios/json.ts'
import type { Output } from '../../devnet/chain-a/types.ts'
import { ADA, buildTx, getJson, largestUtxo, plutusData, signaturePolicy, startDevnet, unitOf } from '../support/devnet.ts'
import fixture from '../fixtures/plutus/redeemer-equals-datum.plutus.json'

/**
 * The devnet's Ogmios v6 JSON-RPC over WebSocket, through the official TypeScript client
 * (@cardano-ogmios/client): ledger-state and network queries, chain synchronisation through a
 * rollback, evaluation and submission. Every frame the server sends is validated against the
 * schema @cardano-ogmios/schema publishes, and the figures are checked against the devnet's
 * Blockfrost API for the same objects.
 */

// ---- the published schema -------------------------------------------------------------------

/**
 * @cardano-ogmios/schema ships the Ogmios JSON schema as the TypeScript declarations generated from
 * it (dist/index.d.ts; the package holds no .json file). They are turned back into JSON Schema
 * definitions, one per declared type, for ajv: interfaces without an index signature allow no
 * other properties, `bigint` is a JSON integer, literals are constants, unions are anyOf. The
 * `Ogmios` interface names each method's request and response (e.g.
 * `QueryLedgerStateProtocolParametersResponse`: the result or one of the query's errors).
 */
function ogmiosSchema() {
  const file = require.resolve('@cardano-ogmios/schema/dist/index.d.ts')
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const definitions: Record<string, unknown> = {}
  const nameOf = (name: ts.PropertyName) => (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) ? name.text : name.getText())
  const literal = (node: ts.LiteralTypeNode): unknown => {
    const l = node.literal
    if (l.kind === ts.SyntaxKind.NullKeyword) return { type: 'null' }
    if (l.kind === ts.SyntaxKind.TrueKeyword) return { const: true }
    if (l.kind === ts.SyntaxKind.FalseKeyword) return { const: false }
    if (ts.isStringLiteral(l)) return { const: l.text }
    if (ts.isNumericLiteral(l)) return { const: Number(l.text) }
    if (ts.isPrefixUnaryExpression(l) && ts.isNumericLiteral(l.operand)) return { const: -Number(l.operand.text) }
    throw new Error(`unsupported literal ${node.getText()}`)
  }
  const objectOf = (members: ts.NodeArray<ts.TypeElement>) => {
    const properties: Record<string, unknown> = {}
    const required: string[] = []
    let additional: unknown = false
    for (const member of members) {
      if (ts.isPropertySignature(member)) {
        const name = nameOf(member.name)
        properties[name] = member.type ? typeOf(member.type) : {}
        if (!member.questionToken) required.push(name)
      } else if (ts.isIndexSignatureDeclaration(member)) {
        additional = typeOf(member.type)
      }
    }
    return { type: 'object', properties, required, additionalProperties: additional }
  }
  const typeOf = (node: ts.TypeNode): unknown => {
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword: return { type: 'string' }
      case ts.SyntaxKind.NumberKeyword: return { type: 'number' }
      case ts.SyntaxKind.BigIntKeyword: return { type: 'integer' }
      case ts.SyntaxKind.BooleanKeyword: return { type: 'boolean' }
      case ts.SyntaxKind.NullKeyword: return { type: 'null' }
      case ts.SyntaxKind.UnknownKeyword: case ts.SyntaxKind.AnyKeyword: return {}
    }
    if (ts.isTypeReferenceNode(node)) return { $ref: `#/definitions/${node.typeName.getText()}` }
    if (ts.isUnionTypeNode(node)) return { anyOf: node.types.map(typeOf) }
    if (ts.isIntersectionTypeNode(node)) return { allOf: node.types.map(typeOf) }
    if (ts.isParenthesizedTypeNode(node)) return typeOf(node.type)
    if (ts.isArrayTypeNode(node)) return { type: 'array', items: typeOf(node.elementType) }
    if (ts.isTupleTypeNode(node)) return { type: 'array', prefixItems: node.elements.map(e => typeOf(e as ts.TypeNode)) }
    if (ts.isLiteralTypeNode(node)) return literal(node)
    if (ts.isTypeLiteralNode(node)) return objectOf(node.members)
    throw new Error(`unsupported type ${ts.SyntaxKind[node.kind]}: ${node.getText()}`)
  }
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement)) {
      definitions[statement.name.text] = objectOf(statement.members)
      if (statement.name.text === 'Ogmios') {
        for (const member of statement.members) {
          if (ts.isPropertySignature(member) && member.type) definitions[`Ogmios.${nameOf(member.name)}`] = typeOf(member.type)
        }
      }
    } else if (ts.isTypeAliasDeclaration(statement)) {
      definitions[statement.name.text] = typeOf(statement.type)
    }
  }
  return { $id: 'ogmios', definitions }
}

const ajv = new Ajv({ strict: false, allErrors: true }).addSchema(ogmiosSchema())
const validators = new Map<string, ValidateFunction>()

function validatorFor(definition: string): ValidateFunction {
  if (!validators.has(definition)) {
    const validate = ajv.getSchema(`ogmios#/definitions/${definition}`)
    if (!validate) throw new Error(`the schema has no definition ${definition}`)
    validators.set(definition, validate)
  }
  return validators.get(definition)!
}

/** The schema's name for a method's response: `queryLedgerState/utxo` → `QueryLedgerStateUtxoResponse`; an answer without method is an RpcError. */
const responseDefinition = (method: unknown) =>
  typeof method === 'string' ? `Ogmios.${method.split('/').map(part => part[0].toUpperCase() + part.slice(1)).join('')}Response` : 'RpcError'

/** Every frame any client received, and what the schema found wrong with it. */
const frames: { definition: string; message: any }[] = []
const schemaErrors: unknown[] = []

function validateFrame(raw: WebSocket.RawData) {
  const message = JSON.parse(raw.toString())
  const definition = responseDefinition(message.method)
  const validate = validatorFor(definition)
  frames.push({ definition, message })
  if (!validate(message)) schemaErrors.push({ definition, message: JSON.stringify(message).slice(0, 600), errors: validate.errors?.slice(0, 5) })
}

// ---- the devnet and its clients -------------------------------------------------------------

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
let port: number
const contexts: InteractionContext[] = []
const validator = CSL.PlutusScript.from_bytes_v3(Buffer.from(fixture.cborHex, 'hex'))
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(validator.hash())).to_address().to_bech32()

async function connect(address?: { http: string; webSocket: string }): Promise<InteractionContext> {
  const context = await createInteractionContext(
    error => { throw error },
    () => {},
    { connection: address ? { address } : { host: '127.0.0.1', port } },
  )
  context.socket.on('message', validateFrame)
  contexts.push(context)
  return context
}

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'ogmios-test' })
  port = Number(new URL(devnet.url).port)
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  transfer(w1, w2, 7n * ADA)
  devnet.produceBlock()
  devnet.produceBlock()
})

afterAll(async () => {
  await Promise.all(contexts.map(context => new Promise<void>(resolve => {
    if (context.socket.readyState !== context.socket.OPEN) return resolve()
    context.socket.once('close', () => resolve())
    context.socket.close()
  })))
  await devnet.stop()
})

afterEach(() => {
  expect(schemaErrors).toEqual([])
})

function transfer(from: WalletKeyPair, to: WalletKeyPair, coin: bigint): string {
  return devnet.submit(buildTx({ inputs: [largestUtxo(devnet, from.address)], outputs: [{ address: to.address, coin }], signers: [from.payment] }))
}

const unspent = (address: string) => devnet.ledger.unspentAt(address).filter(o => !devnet.ledger.pendingView.isSpent(o.ref))
const adaOnly = (address: string) => unspent(address).filter(o => o.value.assets.size === 0).sort((a, b) => Number(b.value.coin - a.value.coin))
const sortRefs = (entries: { transaction: { id: string }; index: number }[]) => entries.map(e => `${e.transaction.id}#${e.index}`).sort()

/** Waits (briefly) until the condition holds. */
async function until(condition: () => boolean, what: string, ms = 5000) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

// ---- queries --------------------------------------------------------------------------------

describe('network and ledger-state queries', () => {
  let client: Awaited<ReturnType<typeof createLedgerStateQueryClient>>
  beforeAll(async () => { client = await createLedgerStateQueryClient(await connect()) })

  it('answers the tip, block height, epoch and start time the Blockfrost API gives', async () => {
    const latest = (await getJson(devnet, '/blocks/latest')).body
    expect(await client.networkTip()).toEqual({ slot: latest.slot, id: latest.hash })
    expect(await client.ledgerTip()).toEqual({ slot: latest.slot, id: latest.hash })
    expect(await client.networkBlockHeight()).toBe(latest.height)
    expect(await client.epoch()).toBe((await getJson(devnet, '/epochs/latest')).body.epoch)
    const genesis = (await getJson(devnet, '/genesis')).body
    expect((await client.networkStartTime()).getTime()).toBe(genesis.system_start * 1000)
    expect(await client.eraStart()).toEqual({ time: { seconds: 0 }, slot: 0, epoch: 0 })
    const summaries = await client.eraSummaries()
    expect(summaries).toHaveLength(7)
    expect(summaries[6]).toEqual({ start: { time: { seconds: 0 }, slot: 0, epoch: 0 }, parameters: { epochLength: genesis.epoch_length, slotLength: { milliseconds: 1000 }, safeZone: 600 } })
  })

  it('answers the genesis configurations from the devnet genesis, with the supply as a JSON integer beyond 2^53', async () => {
    const genesis = (await getJson(devnet, '/genesis')).body
    const shelley = await client.genesisConfiguration('shelley')
    expect(shelley).toMatchObject({
      era: 'shelley', networkMagic: genesis.network_magic, network: 'testnet', activeSlotsCoefficient: '1/20',
      securityParameter: genesis.security_param, epochLength: genesis.epoch_length, slotsPerKesPeriod: genesis.slots_per_kes_period,
      maxKesEvolutions: genesis.max_kes_evolutions, updateQuorum: genesis.update_quorum, slotLength: { milliseconds: 1000 },
    })
    expect(shelley.maxLovelaceSupply as unknown).toBe(45_000_000_000_000_000n)
    expect(shelley.initialFunds[w1.address]).toEqual({ ada: { lovelace: 10_000n * ADA } })
    const pools = (await getJson(devnet, '/pools')).body
    expect(Object.keys(shelley.initialStakePools.stakePools).sort()).toEqual([...pools].sort())
    expect(await client.genesisConfiguration('alonzo')).toMatchObject({ era: 'alonzo', updatableParameters: { collateralPercentage: 150, maxCollateralInputs: 3 } })
    expect(await client.genesisConfiguration('conway')).toMatchObject({ era: 'conway', updatableParameters: { governanceActionLifetime: 6 } })
    expect(await client.genesisConfiguration('byron')).toMatchObject({ era: 'byron', networkMagic: genesis.network_magic })
  })

  it('writes integers beyond 2^53 as plain JSON integers', async () => {
    const raw = await rawCall({ jsonrpc: '2.0', method: 'queryNetwork/genesisConfiguration', params: { era: 'shelley' } })
    expect(raw).toContain('"maxLovelaceSupply":45000000000000000')
  })

  it('answers the protocol parameters the Blockfrost API gives', async () => {
    const p = await client.protocolParameters()
    const bf = (await getJson(devnet, '/epochs/latest/parameters')).body
    expect(p).toMatchObject({
      minFeeCoefficient: bf.min_fee_a,
      minFeeConstant: { ada: { lovelace: BigInt(bf.min_fee_b) } },
      maxBlockBodySize: { bytes: bf.max_block_size },
      maxBlockHeaderSize: { bytes: bf.max_block_header_size },
      maxTransactionSize: { bytes: bf.max_tx_size },
      maxValueSize: { bytes: Number(bf.max_val_size) },
      minUtxoDepositCoefficient: Number(bf.coins_per_utxo_size),
      stakeCredentialDeposit: { ada: { lovelace: BigInt(bf.key_deposit) } },
      stakePoolDeposit: { ada: { lovelace: BigInt(bf.pool_deposit) } },
      minStakePoolCost: { ada: { lovelace: BigInt(bf.min_pool_cost) } },
      desiredNumberOfStakePools: bf.n_opt,
      stakePoolRetirementEpochBound: bf.e_max,
      collateralPercentage: bf.collateral_percent,
      maxCollateralInputs: bf.max_collateral_inputs,
      maxExecutionUnitsPerTransaction: { memory: Number(bf.max_tx_ex_mem), cpu: Number(bf.max_tx_ex_steps) },
      maxExecutionUnitsPerBlock: { memory: Number(bf.max_block_ex_mem), cpu: Number(bf.max_block_ex_steps) },
      version: { major: bf.protocol_major_ver, minor: bf.protocol_minor_ver },
      delegateRepresentativeDeposit: { ada: { lovelace: BigInt(bf.drep_deposit) } },
      governanceActionDeposit: { ada: { lovelace: BigInt(bf.gov_action_deposit) } },
    })
    expect(p.plutusCostModels).toEqual({ 'plutus:v1': bf.cost_models.PlutusV1, 'plutus:v2': bf.cost_models.PlutusV2, 'plutus:v3': bf.cost_models.PlutusV3 })
    const [memNum, memDen] = p.scriptExecutionPrices!.memory.split('/').map(Number)
    const [cpuNum, cpuDen] = p.scriptExecutionPrices!.cpu.split('/').map(Number)
    expect(memNum / memDen).toBeCloseTo(bf.price_mem, 12)
    expect(cpuNum / cpuDen).toBeCloseTo(bf.price_step, 12)
    expect(p.monetaryExpansion).toBe('3/1000')
    expect(p.treasuryExpansion).toBe('1/5')
    expect(p.stakePoolPledgeInfluence).toBe('3/10')
  })

  it('answers the stake pools, optionally filtered and with their stake, and the live stake distribution', async () => {
    const extended = (await getJson(devnet, '/pools/extended')).body as any[]
    const pools = await client.stakePools()
    expect(Object.keys(pools).sort()).toEqual(extended.map(p => p.pool_id).sort())
    for (const bf of extended) {
      const pool = (await getJson(devnet, `/pools/${bf.pool_id}`)).body
      expect(pools[bf.pool_id]).toMatchObject({
        id: bf.pool_id, vrfVerificationKeyHash: pool.vrf_key, pledge: { ada: { lovelace: BigInt(bf.declared_pledge) } },
        cost: { ada: { lovelace: BigInt(bf.fixed_cost) } }, rewardAccount: pool.reward_account, relays: [],
      })
      expect(pools[bf.pool_id].stake).toBeUndefined()
    }
    const one = extended[1]
    const filtered = await client.stakePools([{ id: one.pool_id }], true)
    expect(Object.keys(filtered)).toEqual([one.pool_id])
    expect(filtered[one.pool_id].stake).toEqual({ ada: { lovelace: BigInt(one.live_stake) } })

    const distribution = await client.liveStakeDistribution()
    const total = extended.reduce((sum, p) => sum + BigInt(p.live_stake), 0n)
    for (const bf of extended) {
      const [n, d] = distribution[bf.pool_id].stake.split('/').map(BigInt)
      expect(n * total).toBe(BigInt(bf.live_stake) * d)
    }
  })

  it('answers reward account summaries by key hash and by stake address, as the Blockfrost account', async () => {
    const account = (await getJson(devnet, `/accounts/${w1.stakeAddress}`)).body
    const keyHash = w1.stake.to_public().hash().to_hex()
    const byHash = await client.rewardAccountSummaries({ keys: [keyHash] })
    const byAddress = await client.rewardAccountSummaries({ keys: [w1.stakeAddress] })
    expect(byAddress).toEqual(byHash)
    expect(byHash).toEqual([expect.objectContaining({
      credential: keyHash, from: 'verificationKey', stakePool: { id: account.pool_id },
      rewards: { ada: { lovelace: BigInt(account.withdrawable_amount) } }, deposit: { ada: { lovelace: 2_000_000n } },
    })])
    expect(await client.rewardAccountSummaries({ scripts: [validator.hash().to_hex()] })).toEqual([])
  })

  it('answers the DReps with their mandate, deposit, stake and delegators, as the Blockfrost API does', async () => {
    const bf = (await getJson(devnet, '/governance/dreps')).body as any[]
    const all = await query('queryLedgerState/delegateRepresentatives') as any[]
    const registered = all.filter(summary => summary.type === 'registered')
    expect(registered.map(summary => summary.id).sort()).toEqual(bf.map(drep => drep.hex).sort())
    expect(all.filter(summary => summary.type !== 'registered').map(summary => summary.type).sort()).toEqual(['abstain', 'noConfidence'])
    const epoch = devnet.ledger.currentEpoch
    const idle = devnet.ledger.params.drepActivity
    for (const drep of bf) {
      const summary = registered.find(s => s.id === drep.hex)
      const delegators = (await getJson(devnet, `/governance/dreps/${drep.drep_id}/delegators`)).body as any[]
      expect(summary).toEqual({
        type: 'registered', id: drep.hex, from: 'verificationKey', mandate: { epoch: drep.last_active_epoch + idle },
        deposit: adaAmount(devnet.ledger.params.drepDeposit), stake: adaAmount(drep.amount),
        delegators: expect.any(Array),
      })
      expect(epoch > summary.mandate.epoch).toBe(drep.expired)
      expect(summary.delegators.map((d: any) => d.credential).sort()).toEqual(delegators.map(d => stakeKeyHash(d.address)).sort())
    }
    expect(registered.some(summary => summary.delegators.length > 0)).toBe(true)

    const [first] = bf
    const byId = await query('queryLedgerState/delegateRepresentatives', { keys: [first.drep_id] }) as any[]
    expect(byId).toEqual([registered.find(s => s.id === first.hex)])
    expect(await query('queryLedgerState/delegateRepresentatives', { keys: [first.hex] })).toEqual(byId)
    expect(await query('queryLedgerState/delegateRepresentatives', { scripts: [first.hex] })).toEqual([])
    const refused = JSON.parse(await rawCall({ jsonrpc: '2.0', method: 'queryLedgerState/delegateRepresentatives', params: { keys: ['nope'] }, id: 'bad' }))
    expect(refused.error.code).toBe(-32602)
  })

  it('answers the treasury and the reserves the Blockfrost API gives, as JSON integers', async () => {
    const { supply } = (await getJson(devnet, '/network')).body
    const answer = await query('queryLedgerState/treasuryAndReserves')
    expect(answer).toEqual({ treasury: adaAmount(supply.treasury), reserves: adaAmount(supply.reserves) })
    expect(typeof (answer as any).reserves.ada.lovelace).toBe('bigint')
  })

  it('answers the UTxO by address, by output reference and whole, as the Blockfrost API does', async () => {
    const bf = (await getJson(devnet, `/addresses/${w2.address}/utxos`)).body as any[]
    const byAddress = await client.utxo({ addresses: [w2.address] })
    expect(sortRefs(byAddress)).toEqual(bf.map(u => `${u.tx_hash}#${u.output_index}`).sort())
    for (const entry of byAddress) {
      const match = bf.find(u => u.tx_hash === entry.transaction.id && u.output_index === entry.index)
      expect(entry.address).toBe(match.address)
      expect(entry.value.ada.lovelace).toBe(BigInt(match.amount.find((a: any) => a.unit === 'lovelace').quantity))
    }
    const refs = byAddress.slice(0, 2).map(e => ({ transaction: { id: e.transaction.id }, index: e.index }))
    const missing = { transaction: { id: 'ab'.repeat(32) }, index: 0 }
    expect(sortRefs(await client.utxo({ outputReferences: [...refs, missing] }))).toEqual(sortRefs(refs))
    const whole = await client.utxo()
    expect(whole.length).toBe([...devnet.ledger.outputs.values()].filter(o => !o.spentBy).length)
    expect(sortRefs(whole)).toEqual(expect.arrayContaining(sortRefs(byAddress)))
  })

  it('answers through /ogmios too, whose health document the client reads first', async () => {
    const url = new URL(devnet.url)
    const context = await connect({ http: `${devnet.url}/ogmios`, webSocket: `ws://${url.host}/ogmios` })
    const other = await createLedgerStateQueryClient(context)
    expect(await other.networkTip()).toEqual(await client.networkTip())
    const health = (await getJson(devnet, '/ogmios/health')).body
    expect(health).toMatchObject({ networkSynchronization: 1, currentEra: 'conway', lastKnownTip: { id: devnet.ledger.tip.hash, height: devnet.ledger.tip.height } })
    expect((await getJson(devnet, '/health')).body).toEqual({ is_healthy: true })
    expect((await getJson(devnet, '/')).body).toMatchObject({ version: '0.1.0' })
  })
})

// ---- chain synchronisation -----------------------------------------------------------------

describe('chain synchronisation', () => {
  type Event = { direction: 'forward'; block: Schema.BlockPraos; tip: Schema.Tip } | { direction: 'backward'; point: Schema.PointOrOrigin; tip: Schema.TipOrOrigin }
  const events: Event[] = []
  let sync: Awaited<ReturnType<typeof createChainSynchronizationClient>>
  const forwards = () => events.filter((e): e is Extract<Event, { direction: 'forward' }> => e.direction === 'forward')

  beforeAll(async () => {
    sync = await createChainSynchronizationClient(await connect(), {
      rollForward: async ({ block, tip }, next) => { events.push({ direction: 'forward', block: block as Schema.BlockPraos, tip: tip as Schema.Tip }); next() },
      rollBackward: async ({ point, tip }, next) => { events.push({ direction: 'backward', point, tip }); next() },
    })
  })

  it('follows the chain from the origin through 20+ blocks, one answer per block as it is produced', async () => {
    const { intersection, tip } = await sync.resume(['origin'], 5)
    expect(intersection).toBe('origin')
    expect(tip).toMatchObject({ id: devnet.ledger.tip.hash, height: devnet.ledger.tip.height })
    await until(() => forwards().length === devnet.ledger.tip.height, 'the blocks produced so far')
    expect(events[0]).toEqual({ direction: 'backward', point: 'origin', tip: expect.anything() })

    const transfers: string[] = []
    // A transaction that mints under a native policy, carries metadata and delegates its vote.
    const w3 = devnet.walletKeys('wallet-3')
    const policy = signaturePolicy(w3.payment)
    const drep = [...devnet.ledger.dreps.values()].find(d => d.hex !== devnet.ledger.accounts.get(w3.stakeAddress)!.drep)!
    const rich = devnet.submit(buildTx({
      inputs: [largestUtxo(devnet, w3.address)],
      mint: [{ policy, name: 'OGM', quantity: 1000n }],
      outputs: [{ address: w3.address, coin: 2n * ADA, assets: new Map([[unitOf(policy, 'OGM'), 1000n]]) }],
      metadata: { 674: { msg: ['hello', 'ogmios'] } },
      certificates: [CSL.Certificate.new_vote_delegation(CSL.VoteDelegation.new(CSL.Credential.from_keyhash(w3.stake.to_public().hash()), CSL.DRep.new_key_hash(CSL.Ed25519KeyHash.from_hex(drep.hex))))],
      signers: [w3.payment, w3.stake],
    }))
    transfers.push(rich)
    for (let i = 0; i < 22; i++) {
      if (i % 5 === 0) transfers.push(transfer(i % 2 ? w2 : w1, i % 2 ? w1 : w2, BigInt(3 + i) * ADA))
      const before = forwards().length
      devnet.produceBlock()
      // A long-poll: the waiting nextBlock is answered when the block is made.
      await until(() => forwards().length === before + 1, `block ${devnet.ledger.tip.height}`)
    }
    expect(devnet.ledger.tip.height).toBeGreaterThanOrEqual(24)
    const blocks = forwards().map(e => e.block)
    expect(blocks.map(b => b.height)).toEqual(Array.from({ length: devnet.ledger.tip.height }, (_, i) => i + 1))
    blocks.forEach((block, i) => {
      const ledgerBlock = devnet.ledger.block(block.height)!
      expect(block).toMatchObject({ type: 'praos', era: 'conway', id: ledgerBlock.hash, slot: ledgerBlock.slot, ancestor: ledgerBlock.previousBlock })
      if (i > 0) expect(block.ancestor).toBe(blocks[i - 1].id)
      expect(block.issuer.verificationKey).toMatch(/^[0-9a-f]{64}$/)
    })
    // No answer is sent before there is a block.
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(forwards()).toHaveLength(devnet.ledger.tip.height)
    expect(events.at(-1)!.tip).toEqual({ slot: devnet.ledger.tip.slot, id: devnet.ledger.tip.hash, height: devnet.ledger.tip.height })

    const richTx = blocks.flatMap(b => b.transactions ?? []).find(tx => tx.id === rich)!
    const policyId = policy.hash().to_hex()
    expect(richTx).toMatchObject({
      mint: { [policyId]: { [Buffer.from('OGM').toString('hex')]: 1000n } },
      metadata: { labels: { 674: { json: { msg: ['hello', 'ogmios'] } } } },
      certificates: [{ type: 'stakeDelegation', credential: w3.stake.to_public().hash().to_hex(), from: 'verificationKey', delegateRepresentative: { type: 'registered', id: drep.hex } }],
      scripts: { [policyId]: { language: 'native', json: { clause: 'signature', from: w3.payment.to_public().hash().to_hex() } } },
    })
    expect(richTx.signatories).toHaveLength(2)
    expect(richTx.outputs[0].value[policyId]).toEqual({ [Buffer.from('OGM').toString('hex')]: 1000n })
    expect((await getJson(devnet, `/txs/${rich}/metadata`)).body).toEqual([{ label: '674', json_metadata: { msg: ['hello', 'ogmios'] } }])

    // Each block with transactions carries what the Blockfrost API says of them.
    const withTxs = blocks.filter(b => (b.transactions ?? []).length > 0)
    expect(withTxs.flatMap(b => b.transactions!.map(tx => tx.id))).toEqual(expect.arrayContaining(transfers))
    for (const block of withTxs) {
      const bfBlock = (await getJson(devnet, `/blocks/${block.id}`)).body
      expect({ height: block.height, slot: block.slot, size: block.size.bytes, ancestor: block.ancestor })
        .toEqual({ height: bfBlock.height, slot: bfBlock.slot, size: bfBlock.size, ancestor: bfBlock.previous_block })
      expect(block.transactions!.map(tx => tx.id)).toEqual((await getJson(devnet, `/blocks/${block.id}/txs`)).body)
      for (const tx of block.transactions!) {
        const bfTx = (await getJson(devnet, `/txs/${tx.id}`)).body
        const utxos = (await getJson(devnet, `/txs/${tx.id}/utxos`)).body
        expect(tx.fee).toEqual({ ada: { lovelace: BigInt(bfTx.fees) } })
        expect(tx.spends).toBe('inputs')
        expect(sortRefs(tx.inputs)).toEqual(utxos.inputs.map((i: any) => `${i.tx_hash}#${i.output_index}`).sort())
        expect(tx.outputs.map(o => [o.address, o.value.ada.lovelace])).toEqual(utxos.outputs.map((o: any) => [o.address, BigInt(o.amount[0].quantity)]))
        expect(tx.signatories).toHaveLength(tx.id === rich ? 2 : 1)
        expect(tx.cbor).toMatch(/^84/)
      }
    }
  })

  it('rolls back with the devnet, then follows the fork', async () => {
    const height = devnet.ledger.tip.height
    const forkPoint = devnet.ledger.block(height - 3)!
    const seen = events.length
    devnet.rollBack(3)
    await until(() => events.length === seen + 1, 'the rollback')
    expect(events[seen]).toEqual({ direction: 'backward', point: { slot: forkPoint.slot, id: forkPoint.hash }, tip: { slot: forkPoint.slot, id: forkPoint.hash, height: forkPoint.height } })
    devnet.produceBlock()
    devnet.produceBlock()
    await until(() => events.length === seen + 3, 'the fork\'s blocks')
    const fork = events.slice(seen + 1).map(e => (e as Extract<Event, { direction: 'forward' }>).block)
    expect(fork.map(b => b.height)).toEqual([forkPoint.height + 1, forkPoint.height + 2])
    expect(fork[0].ancestor).toBe(forkPoint.hash)
    expect(fork.map(b => b.id)).toEqual([devnet.ledger.block(forkPoint.height + 1)!.hash, devnet.ledger.block(forkPoint.height + 2)!.hash])
  })

  it('finds the best intersection among the points, or answers 1000 IntersectionNotFound with the tip', async () => {
    const block = devnet.ledger.block(5)!
    const other = await createChainSynchronizationClient(await connect(), { rollForward: async (_r, next) => next(), rollBackward: async (_r, next) => next() })
    const found = await other.resume([{ slot: 1, id: 'ff'.repeat(32) }, { slot: block.slot, id: block.hash }, 'origin'], 1)
    expect(found.intersection).toEqual({ slot: block.slot, id: block.hash })
    await expect(other.resume([{ slot: 1, id: 'ff'.repeat(32) }], 1)).rejects.toMatchObject({ code: 1000, data: { tip: { id: devnet.ledger.tip.hash } } })
  })
})

// ---- evaluation and submission -------------------------------------------------------------

describe('transaction evaluation and submission', () => {
  let submission: Awaited<ReturnType<typeof createTransactionSubmissionClient>>
  let locked: Output
  const GENEROUS = { mem: 1_000_000, steps: 500_000_000 }
  beforeAll(async () => {
    submission = await createTransactionSubmissionClient(await connect())
    const hash = devnet.submit(buildTx({
      inputs: [adaOnly(w1.address)[0]],
      outputs: [{ address: scriptAddress, coin: 10n * ADA, datum: { inline: plutusData({ int: 42 }) } }],
      signers: [w1.payment],
    }))
    devnet.produceBlock()
    locked = devnet.ledger.outputs.get(`${hash}#0`)!
  })

  function spend(redeemer: number, exUnits = GENEROUS): Uint8Array {
    const [funding, collateral] = adaOnly(w1.address)
    const inputs = [locked, funding]
    const index = inputs.map(i => i.ref).sort().indexOf(locked.ref)
    return buildTx({
      inputs, outputs: [{ address: w2.address, coin: 5n * ADA }], change: w1.address, plutusScripts: [validator],
      redeemers: [{ tag: 'spend', index, data: plutusData({ int: redeemer }), ...exUnits }], collateral: [collateral], signers: [w1.payment],
    })
  }

  it('evaluates a Plutus spend as Blockfrost\'s evaluation (Ogmios v6 shape) does, and reports a failing script as 3010', async () => {
    const cbor = Buffer.from(spend(42)).toString('hex')
    const budgets = await submission.evaluateTransaction(cbor)
    const bf = await (await fetch(`${devnet.url}/utils/txs/evaluate?version=6`, { method: 'POST', body: cbor })).json() as any
    expect(budgets).toEqual(bf.result)
    expect(budgets).toEqual([{ validator: { purpose: 'spend', index: expect.any(Number) }, budget: { memory: expect.any(Number), cpu: expect.any(Number) } }])
    expect(budgets[0].budget.memory).toBeGreaterThan(1000)

    await expect(submission.evaluateTransaction(Buffer.from(spend(41)).toString('hex'))).rejects.toMatchObject({
      code: 3010, data: [{ validator: { purpose: 'spend' }, error: { code: 3012, data: { traces: ['redeemer does not match datum'] } } }],
    })
    // An input the ledger does not hold, given as additional UTxO.
    const extra = { transaction: { id: 'cd'.repeat(32) }, index: 0 }
    const [funding] = adaOnly(w1.address)
    const withExtra = buildTx({ inputs: [{ ...funding, txHash: extra.transaction.id, index: 0, ref: `${extra.transaction.id}#0` }], outputs: [{ address: w2.address, coin: 5n * ADA }], change: w1.address, signers: [w1.payment] })
    expect(await submission.evaluateTransaction(Buffer.from(withExtra).toString('hex'), [{ ...extra, address: w1.address, value: { ada: { lovelace: funding.value.coin } } }])).toEqual([])
    await expect(submission.evaluateTransaction('zz')).rejects.toMatchObject({ code: -32602 })
  })

  it('submits a valid transaction (its hash back, in the mempool, then in a block)', async () => {
    const budgets = await submission.evaluateTransaction(Buffer.from(spend(42)).toString('hex'))
    const cbor = spend(42, { mem: budgets[0].budget.memory, steps: budgets[0].budget.cpu })
    const id = await submission.submitTransaction(Buffer.from(cbor).toString('hex'))
    expect(id).toBe(CSL.FixedTransaction.from_bytes(cbor).transaction_hash().to_hex())
    expect(devnet.ledger.mempoolTransactions().map(tx => tx.hash)).toContain(id)
    devnet.produceBlock()
    expect((await getJson(devnet, `/txs/${id}`)).body).toMatchObject({ hash: id, valid_contract: true, redeemer_count: 1 })
  })

  it('refuses invalid transactions with Ogmios\' submit error codes and the ledger\'s reason', async () => {
    const mempool = devnet.ledger.mempoolTransactions().length
    const unbalanced = buildTx({ inputs: [largestUtxo(devnet, w2.address)], outputs: [{ address: w1.address, coin: 2n * ADA }], changeDelta: 1n, signers: [w2.payment] })
    await expect(submission.submitTransaction(Buffer.from(unbalanced).toString('hex'))).rejects.toMatchObject({
      code: 3123, message: expect.stringMatching(/^ValueNotConservedUTxO: /), data: { valueConsumed: { ada: { lovelace: expect.any(BigInt) } }, valueProduced: { ada: expect.anything() } },
    })
    const spentAlready = devnet.ledger.outputs.get(locked.ref)!
    const replay = buildTx({ inputs: [spentAlready], outputs: [{ address: w1.address, coin: 2n * ADA }], signers: [w1.payment] })
    await expect(submission.submitTransaction(Buffer.from(replay).toString('hex'))).rejects.toMatchObject({
      code: 3117, data: { unknownOutputReferences: [{ transaction: { id: spentAlready.txHash }, index: spentAlready.index }] },
    })
    const unsigned = buildTx({ inputs: [largestUtxo(devnet, w2.address)], outputs: [{ address: w1.address, coin: 2n * ADA }], signers: [] })
    await expect(submission.submitTransaction(Buffer.from(unsigned).toString('hex'))).rejects.toMatchObject({
      code: 3101, data: { missingSignatories: [w2.payment.to_public().hash().to_hex()] },
    })
    const feeTooSmall = buildTx({ inputs: [largestUtxo(devnet, w2.address)], outputs: [{ address: w1.address, coin: 2n * ADA }], fee: 1000n, signers: [w2.payment] })
    await expect(submission.submitTransaction(Buffer.from(feeTooSmall).toString('hex'))).rejects.toMatchObject({ code: 3122, data: { providedFee: { ada: { lovelace: 1000n } } } })
    await expect(submission.submitTransaction('84a0')).rejects.toMatchObject({ code: -32602, data: { conway: expect.stringMatching(/^the transaction is not valid/) } })
    await expect(submission.submitTransaction('not hex')).rejects.toMatchObject({ code: -32602 })
    expect(devnet.ledger.mempoolTransactions()).toHaveLength(mempool)
  })
})

// ---- hostile input --------------------------------------------------------------------------

/** A query the official client has no function for, on a raw connection: its result, integers beyond 2^53 as bigint. */
async function query(method: string, params?: Record<string, unknown>): Promise<unknown> {
  const answer = parseJson(await rawCall({ jsonrpc: '2.0', method, ...(params ? { params } : {}), id: method })) as { result?: unknown; error?: unknown }
  if (!('result' in answer)) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`)
  return answer.result
}

/** Lovelace as JSON parses it: a number, or a bigint beyond 2^53. */
const adaAmount = (lovelace: bigint | string) => ({ ada: { lovelace: BigInt(lovelace) > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(lovelace) : Number(lovelace) } })

const stakeKeyHash = (stakeAddress: string) => CSL.RewardAddress.from_address(CSL.Address.from_bech32(stakeAddress))!.payment_cred().to_keyhash()!.to_hex()

/** One request on a fresh raw connection to /ogmios; answers the frame received, as text. */
async function rawCall(request: unknown, path = '/ogmios'): Promise<string> {
  const answers = await rawExchange([typeof request === 'string' ? request : JSON.stringify(request)], 1, path)
  return answers[0]
}

async function rawExchange(messages: (string | Buffer)[], expected: number, path = '/ogmios'): Promise<string[]> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}${path}`)
  const answers: string[] = []
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject)
    socket.on('open', () => messages.forEach(m => socket.send(m)))
    socket.on('message', raw => {
      validateFrame(raw)
      answers.push(raw.toString())
      if (answers.length === expected) resolve()
    })
    socket.on('close', () => resolve())
  })
  socket.close()
  return answers
}

describe('hostile input', () => {
  it('answers malformed JSON, non-requests, unknown methods and wrong params with JSON-RPC errors, and keeps serving', async () => {
    const answers = await rawExchange([
      '{"jsonrpc": "2.0", "method": ',
      '[1, 2, 3]',
      '"just a string"',
      JSON.stringify({ jsonrpc: '2.0', method: 'queryLedgerState/everything', id: 1 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'constructor', id: 2 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'queryLedgerState/utxo', params: { addresses: 5 }, id: 3 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'queryLedgerState/utxo', params: { addresses: ['not an address'] }, id: 4 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'queryNetwork/genesisConfiguration', params: { era: 'mary' }, id: 5 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'findIntersection', params: { points: [{ slot: 'x' }] }, id: 6 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'submitTransaction', params: {}, id: 7 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'queryLedgerState/tip', params: [1], id: 8 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'queryLedgerState/rewardAccountSummaries', params: { keys: [{}] }, id: 9 }),
      JSON.stringify({ jsonrpc: '2.0', method: 'evaluateTransaction', params: { transaction: { cbor: '84a0' }, additionalUtxo: [{ nope: true }] }, id: 10 }),
      Buffer.from([0xff, 0xfe, 0x00]),
      JSON.stringify({ jsonrpc: '2.0', method: 'queryNetwork/blockHeight', id: 'still-here' }),
    ], 15)
    const parsed = answers.map(a => JSON.parse(a))
    expect(parsed.map(a => a.error?.code ?? 'result')).toEqual([-32700, -32600, -32600, -32601, -32601, -32602, -32602, -32602, -32602, -32602, -32602, -32602, -32602, -32700, 'result'])
    expect(parsed.slice(3).map(a => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, null, 'still-here'])
    expect(parsed.at(-1)).toEqual({ jsonrpc: '2.0', method: 'queryNetwork/blockHeight', result: devnet.ledger.tip.height, id: 'still-here' })
  })

  it('closes a connection whose frame is too big, refuses upgrades elsewhere, and the devnet keeps serving', async () => {
    const closed = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/ogmios`)
      socket.on('error', () => {})
      socket.on('open', () => socket.send('x'.repeat(5 * 1024 * 1024)))
      const timer = setTimeout(() => reject(new Error('not closed')), 5000)
      socket.on('close', code => { clearTimeout(timer); resolve(code) })
    })
    expect(closed).toBe(1009)
    await expect(new Promise((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/blocks/latest`)
      socket.on('open', () => resolve('open'))
      socket.on('error', reject)
    })).rejects.toThrow(/404/)
    expect(JSON.parse(await rawCall({ jsonrpc: '2.0', method: 'queryNetwork/tip' }, '/'))).toEqual({ jsonrpc: '2.0', method: 'queryNetwork/tip', result: { slot: devnet.ledger.tip.slot, id: devnet.ledger.tip.hash } })
    expect((await getJson(devnet, '/blocks/latest')).body.hash).toBe(devnet.ledger.tip.hash)
  })

  it('had every frame validated, by a schema that tells a conforming answer from a malformed one', () => {
    expect(frames.length).toBeGreaterThan(50)
    expect(new Set(frames.map(f => f.definition))).toEqual(new Set([
      'Ogmios.QueryNetworkTipResponse', 'Ogmios.QueryNetworkBlockHeightResponse', 'Ogmios.QueryNetworkStartTimeResponse', 'Ogmios.QueryNetworkGenesisConfigurationResponse',
      'Ogmios.QueryLedgerStateTipResponse', 'Ogmios.QueryLedgerStateEpochResponse', 'Ogmios.QueryLedgerStateEraStartResponse', 'Ogmios.QueryLedgerStateEraSummariesResponse',
      'Ogmios.QueryLedgerStateProtocolParametersResponse', 'Ogmios.QueryLedgerStateStakePoolsResponse', 'Ogmios.QueryLedgerStateRewardAccountSummariesResponse',
      'Ogmios.QueryLedgerStateUtxoResponse', 'Ogmios.QueryLedgerStateLiveStakeDistributionResponse', 'Ogmios.FindIntersectionResponse', 'Ogmios.NextBlockResponse',
      'Ogmios.QueryLedgerStateDelegateRepresentativesResponse', 'Ogmios.QueryLedgerStateTreasuryAndReservesResponse',
      'Ogmios.EvaluateTransactionResponse', 'Ogmios.SubmitTransactionResponse', 'RpcError',
    ]))
    // The same frames, spoiled, fail validation.
    const spoiled = (definition: string, spoil: (message: any) => void) => {
      const message = structuredClone(frames.find(f => f.definition === definition)!.message)
      spoil(message)
      return validatorFor(definition)(message)
    }
    expect(spoiled('Ogmios.QueryLedgerStateTipResponse', m => { m.result.slot = String(m.result.slot) })).toBe(false)
    expect(spoiled('Ogmios.QueryLedgerStateTipResponse', m => { m.result.height = 1 })).toBe(false)
    expect(spoiled('Ogmios.QueryLedgerStateProtocolParametersResponse', m => { delete m.result.version })).toBe(false)
    expect(spoiled('Ogmios.NextBlockResponse', m => { m.result.direction = 'sideways' })).toBe(false)
    expect(spoiled('Ogmios.QueryLedgerStateUtxoResponse', m => { m.result[0].value.ada = { lovelace: '1' } })).toBe(false)
    expect(spoiled('Ogmios.QueryLedgerStateDelegateRepresentativesResponse', m => { m.result[0].stake.ada.lovelace = '1' })).toBe(false)
    expect(spoiled('Ogmios.QueryLedgerStateTreasuryAndReservesResponse', m => { delete m.result.treasury })).toBe(false)
  })
})
