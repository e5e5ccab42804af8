import { createHash } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { SponsoredCall, Submission, VaultCall } from '../../srv/chains/chain-b/port.ts'
import type { MidnightLedgerDefaults, VaultDeployment } from '../../srv/chains/chain-b/vault-codec.ts'
import { emptyVaultState, identityOf, sha256Hex, signDigest, type VaultKey, vaultKeyFromSeed, type VaultState, verifyDigest } from '../../srv/chains/chain-b/vault.ts'
import { checkCallShape, checkCallSignatures, ExecutionFailure, executeCall } from './contract.ts'
import {
  type Block, type ContractActionRecord, type DeployBody, LedgerRejection, type LedgerParameters, NIGHT, type OutputRef, type OutputSpec,
  type RegularBody, type StoredBlock, type SystemBody, type TxBody, type TxRecord, type Utxo,
} from './types.ts'

/**
 * The chain-B devnet's ledger: blocks with authors from a producer set of three keys and epochs of
 * configurable length; regular transactions (a guaranteed segment with an unshielded offer and
 * shielded outputs, a fallible segment with a vault call) and system transactions; unshielded UTXOs
 * whose value is conserved; shielded outputs visible only as zswap ledger events; DUST balances
 * that pay every regular transaction's fee; and the attestation vault, deployed at genesis.
 *
 * A submitted transaction is checked against the ledger and the mempool before it is accepted; at
 * its block it is applied, and one that no longer applies (an input spent meanwhile, DUST spent by
 * an earlier one) is dropped. The chain's state is a function of its blocks' bodies: a reorg and a
 * restart replay them.
 */

/** DUST's smallest unit: a DUST is 10^15 specks. */
const SPECKS_PER_DUST = 1e15
/** NIGHT and DUST amounts of the genesis distribution (smallest units). */
const GENESIS_NIGHT_PER_OUTPUT = 1_000_000_000n
const GENESIS_OUTPUTS_PER_ACCOUNT = 4
const GENESIS_DUST = 10n ** 20n
const MAX_TXS_PER_BLOCK = 500
const CHECKPOINT_EVERY = 64
const PRODUCERS = 3
const ACCOUNTS = 4

interface LedgerOptions {
  seed: string
  /** The vault's deployment, made from the seed (vaultDeployment in vault-codec.ts). */
  vault: VaultDeployment
  /** Midnight's initial ledger parameters and empty zswap state (midnightLedgerDefaults in vault-codec.ts). */
  midnight: MidnightLedgerDefaults
  /** Seconds per epoch. */
  epochLength: number
  /** Unix seconds of the genesis block. */
  genesisTimestamp: number
}

interface LedgerState {
  utxos: Map<string, Utxo>
  spentBy: Map<string, number>
  dust: Map<string, bigint>
  vault: VaultState
  deployed: boolean
  zswapSize: number
  zswapRoot: string
  zswapEvents: number
  nextTxId: number
  parameters: LedgerParameters
}

interface VaultAction {
  kind: ContractActionRecord['kind']
  call?: VaultCall
  attesterKey?: string
  sponsorKey?: string
  height: number
  txHash: string
  txId: number
}

const utxoKey = (ref: OutputRef) => `${ref.intentHash}#${ref.outputIndex}`
const hashOf = (value: unknown) => sha256Hex(JSON.stringify(value))
const keyFrom = (seed: string, purpose: string) => vaultKeyFromSeed(createHash('sha256').update(`${seed}:${purpose}`).digest())

/** The digest a payer signs: the body without its signature. */
function bodyDigest(body: RegularBody): Buffer {
  const { payerSignature: _signature, ...unsigned } = body
  return createHash('sha256').update(JSON.stringify(unsigned)).digest()
}

export const signBody = (body: RegularBody, payer: VaultKey): RegularBody => ({ ...body, payerSignature: signDigest(payer, bodyDigest(body)) })

/** A transaction's use of each of a block's resources (picoseconds, bytes), as Midnight's ledger models it. */
export interface ResourceCost { readTime: number; computeTime: number; blockUsage: number; bytesWritten: number; bytesChurned: number }

/**
 * What a resource cost costs (specks), by Midnight's fee formula at the parameters' prices: the
 * block's overall price times the most used of reading, compute and block space, each as a share of
 * the block's limit, plus the writes and churn as shares of theirs. Rounded up, as the ledger rounds.
 */
export function priceOf(cost: ResourceCost, parameters: LedgerParameters): bigint {
  const { feePrices: prices, blockLimits: limits } = parameters
  const utilization = Math.max(
    prices.readFactor * cost.readTime / limits.readTime,
    prices.computeFactor * cost.computeTime / limits.computeTime,
    prices.blockUsageFactor * cost.blockUsage / limits.blockUsage,
  )
  const writes = prices.writeFactor * (cost.bytesWritten / limits.bytesWritten + cost.bytesChurned / limits.bytesChurned)
  return BigInt(Math.ceil(prices.overallPrice * (utilization + writes) * SPECKS_PER_DUST))
}

/**
 * A regular transaction's fee (specks): the price of its resource cost, where the devnet models a
 * transaction's reading and compute as the ledger's baseline and its block space as its body's
 * bytes, and charges no writes.
 */
export function feeOf(body: TxBody, parameters: LedgerParameters): bigint {
  if (body.type !== 'regular') return 0n
  const { payerSignature: _signature, ...unsigned } = body
  const { readTime, computeTime } = parameters.baselineCost
  return priceOf({ readTime, computeTime, blockUsage: Buffer.byteLength(JSON.stringify(unsigned)), bytesWritten: 0, bytesChurned: 0 }, parameters)
}

const emptyState = (parameters: LedgerParameters): LedgerState => ({
  utxos: new Map(), spentBy: new Map(), dust: new Map(), vault: emptyVaultState(), deployed: false,
  zswapSize: 0, zswapRoot: '00'.repeat(32), zswapEvents: 0, nextTxId: 0, parameters,
})

export class Ledger extends EventEmitter {
  readonly seed: string
  readonly epochLength: number
  readonly genesisTimestamp: number
  readonly vaultAddress: string
  private readonly vault: VaultDeployment
  /** Midnight's initial parameters, the genesis block's. */
  readonly initialParameters: LedgerParameters
  /** The vault's zswap state: it holds no coin (the devnet's shielded outputs are commitments of its own, not Midnight coins). */
  readonly vaultZswapState: string
  readonly producers: VaultKey[]
  /** The activity generator's accounts (unshielded NIGHT and DUST at genesis), its attester and sponsor. */
  readonly accounts: VaultKey[]
  readonly activityAttester: VaultKey
  readonly activitySponsor: VaultKey
  blocks: Block[] = []
  mempool: TxBody[] = []
  private state: LedgerState
  private txsByHash = new Map<string, TxRecord[]>()
  private txsByIdentifier = new Map<string, TxRecord[]>()
  private txsById = new Map<number, TxRecord>()
  private vaultActions: VaultAction[] = []
  private checkpoints = new Map<number, string>()
  private callNonces = new Map<string, TxRecord>()
  private pendingFees = new WeakMap<LedgerParameters, WeakMap<RegularBody, bigint>>()
  private salt = 0

  constructor(options: LedgerOptions) {
    super()
    this.setMaxListeners(0)
    this.seed = options.seed
    this.epochLength = Math.max(1, options.epochLength)
    this.genesisTimestamp = options.genesisTimestamp
    this.vault = options.vault
    this.vaultAddress = options.vault.address
    this.initialParameters = options.midnight.parameters
    this.vaultZswapState = options.midnight.emptyZswapState
    this.state = emptyState(this.initialParameters)
    this.producers = Array.from({ length: PRODUCERS }, (_, i) => keyFrom(options.seed, `producer:${i}`))
    this.accounts = Array.from({ length: ACCOUNTS }, (_, i) => keyFrom(options.seed, `account:${i}`))
    this.activityAttester = keyFrom(options.seed, 'activity-attester')
    this.activitySponsor = keyFrom(options.seed, 'activity-sponsor')
  }

  /** The genesis block's bodies: the vault's deployment, NIGHT for the accounts, DUST for them and the activity sponsor. */
  genesisBodies(): TxBody[] {
    const outputs: OutputSpec[] = this.accounts.flatMap(account =>
      Array.from({ length: GENESIS_OUTPUTS_PER_ACCOUNT }, () => ({ owner: account.id, tokenType: NIGHT, value: String(GENESIS_NIGHT_PER_OUTPUT) })))
    const grants = [...this.accounts, this.activitySponsor].map((key, i): SystemBody => ({ type: 'dust-grant', publicKey: key.publicKey, amount: String(GENESIS_DUST), nonce: `genesis:${i}` }))
    return [
      { type: 'parameters', parameters: this.initialParameters, nonce: 'genesis' },
      { type: 'deploy', ...this.vault },
      { type: 'mint', outputs, nonce: 'genesis' },
      ...grants,
    ]
  }

  /** Makes the genesis block of a new chain. */
  createGenesis(): Block {
    return this.appendBlock(this.genesisBodies(), this.genesisTimestamp, true)
  }

  get tip(): Block {
    return this.blocks[this.blocks.length - 1]
  }

  get parameters(): LedgerParameters {
    return this.state.parameters
  }

  // ---- reads ----

  blockAt(height: number): Block | undefined {
    return this.blocks[height]
  }

  blockByHash(hash: string): Block | undefined {
    const records = this.blocks
    for (let i = records.length - 1; i >= 0; i--) if (records[i].hash === hash) return records[i]
    return undefined
  }

  transactionsByHash(hash: string): TxRecord[] {
    return this.txsByHash.get(hash) ?? []
  }

  transactionsByIdentifier(identifier: string): TxRecord[] {
    return this.txsByIdentifier.get(identifier) ?? []
  }

  transactionById(id: number): TxRecord | undefined {
    return this.txsById.get(id)
  }

  /** Where an output was spent, if it was. */
  spentAt(ref: OutputRef): number | undefined {
    return this.state.spentBy.get(utxoKey(ref))
  }

  unspentOutputs(owner?: string): Utxo[] {
    return [...this.state.utxos.values()].filter(utxo => owner === undefined || utxo.owner === owner)
  }

  /** The confirmed DUST balance of a key. */
  dustBalance(publicKey: string): bigint {
    return this.state.dust.get(publicKey) ?? 0n
  }

  /** The DUST a key can still spend: confirmed, plus pending grants, minus the fees of its pending transactions. */
  availableDust(publicKey: string): bigint {
    let balance = this.dustBalance(publicKey)
    for (const body of this.mempool) {
      if (body.type === 'dust-grant' && body.publicKey === publicKey) balance += BigInt(body.amount)
      if (body.type === 'regular' && body.payer === publicKey) balance -= this.pendingFee(body)
    }
    return balance
  }

  /** A pending body's fee at the current parameters, priced once: every submission sums its payer's pending fees. */
  private pendingFee(body: RegularBody): bigint {
    const parameters = this.state.parameters
    let fees = this.pendingFees.get(parameters)
    if (!fees) this.pendingFees.set(parameters, (fees = new WeakMap()))
    let fee = fees.get(body)
    if (fee === undefined) fees.set(body, (fee = feeOf(body, parameters)))
    return fee
  }

  get vaultState(): VaultState {
    return this.state.vault
  }

  /** The vault's state after its action number `index` (0 is the deployment). */
  vaultStateAt(index: number): VaultState {
    if (index >= this.vaultActions.length - 1) return this.state.vault
    const start = Math.floor(index / CHECKPOINT_EVERY) * CHECKPOINT_EVERY
    let state = start === 0 ? emptyVaultState() : JSON.parse(this.checkpoints.get(start)!) as VaultState
    for (let i = start + 1; i <= index; i++) {
      const action = this.vaultActions[i]
      if (action.call) state = executeCall(state, action.call, { attesterKey: action.attesterKey!, sponsorKey: action.sponsorKey! }, action)
    }
    return state
  }

  /** The contract actions of an address, oldest first, with their transactions. */
  actionsOf(address: string): { action: ContractActionRecord; tx: TxRecord }[] {
    if (address !== this.vaultAddress) return []
    return this.vaultActions.map((action, index) => {
      const tx = this.txsById.get(action.txId)!
      return { action: tx.actions.find(a => a.index === index)!, tx }
    })
  }

  epochAt(timestamp: number) {
    const elapsed = Math.max(0, timestamp - this.genesisTimestamp)
    return { epochNo: Math.floor(elapsed / this.epochLength), durationSeconds: this.epochLength, elapsedSeconds: elapsed % this.epochLength }
  }

  zswapEventCount(): number {
    return this.state.zswapEvents
  }

  // ---- writes ----

  /**
   * Submits a sponsored vault call: shape, signatures and the sponsor's DUST are checked now; the
   * contract's rules when its block executes it. The same nonce again answers the first submission.
   */
  submitCall(call: SponsoredCall): Submission {
    if (!call || typeof call !== 'object') throw new LedgerRejection(400, 'MALFORMED_CALL', 'The body must be a sponsored call')
    if (typeof call.nonce !== 'string' || !/^[0-9A-Za-z_:-]{8,128}$/.test(call.nonce)) throw new LedgerRejection(400, 'MALFORMED_CALL', 'nonce must be 8 to 128 letters, digits, _, : or -')
    const earlier = this.findNonce(call.nonce)
    if (earlier) return { ...earlier, duplicate: true }
    if (!call.call || typeof call.call !== 'object') throw new LedgerRejection(400, 'MALFORMED_CALL', 'A sponsored call has a call { circuit, args }')
    const body: RegularBody = { type: 'regular', nonce: call.nonce, payer: call.sponsorKey, call: { contractAddress: call.contractAddress, call: { circuit: call.call.circuit, args: call.call.args }, nonce: call.nonce, attesterKey: call.attesterKey, signature: call.signature, sponsorKey: call.sponsorKey, sponsorSignature: call.sponsorSignature } }
    return { ...this.submit(body), duplicate: false }
  }

  /** Submits a regular transaction (the activity generator's transfers, tests). */
  submit(body: TxBody): { hash: string; identifier: string } {
    if (body.type === 'regular') this.checkRegular(body)
    this.accept(body)
    const hash = hashOf(body)
    return { hash, identifier: identifierOf(hash) }
  }

  /** The faucet: a DUST grant to a key, applied at the next block (and counted as available at once). */
  grantDust(publicKey: string, amount: bigint): { hash: string } {
    if (!/^[0-9a-f]{64}$/.test(publicKey ?? '')) throw new LedgerRejection(400, 'INVALID_PUBLIC_KEY', 'publicKey must be a 32-byte ed25519 public key, lowercase hex')
    if (amount <= 0n || amount > 10n ** 24n) throw new LedgerRejection(400, 'INVALID_AMOUNT', 'amount must be a positive integer of at most 10^24')
    const body: SystemBody = { type: 'dust-grant', publicKey, amount: String(amount), nonce: `${Date.now()}:${Math.random().toString(36).slice(2)}` }
    this.accept(body)
    return { hash: hashOf(body) }
  }

  /** Queues a system transaction (the activity generator's parameter updates). */
  submitSystem(body: SystemBody) {
    this.accept(body)
  }

  /** Produces the next block from the mempool. */
  produceBlock(timestamp = Math.floor(Date.now() / 1000)): Block {
    const bodies = this.mempool.splice(0, MAX_TXS_PER_BLOCK)
    const block = this.appendBlock(bodies, Math.max(timestamp, this.tip.timestamp), false)
    this.emit('mempool', this.mempool)
    return block
  }

  /**
   * Replaces the blocks above `height` by as many new ones (or `blocks`), with other hashes. Their
   * regular transactions and faucet grants go back to the mempool first, unless `drop`.
   */
  reorg(height: number, options: { drop?: boolean; blocks?: number } = {}): { removed: number; tip: Block } {
    if (!Number.isInteger(height) || height < 0 || height >= this.tip.height) throw new LedgerRejection(400, 'INVALID_REORG', `A reorg needs a height from 0 to ${this.tip.height - 1}`)
    const removed = this.blocks.slice(height + 1)
    const returned = options.drop ? [] : removed.flatMap(block => block.transactions.filter(tx => tx.body.type === 'regular' || tx.body.type === 'dust-grant').map(tx => tx.body))
    const kept: StoredBlock[] = this.blocks.slice(0, height + 1).map(stored)
    this.salt++
    this.replay(kept)
    this.mempool = [...returned, ...this.mempool]
    this.emit('reorg', height)
    this.emit('mempool', this.mempool)
    const count = options.blocks ?? removed.length
    for (let i = 0; i < count; i++) this.produceBlock()
    return { removed: removed.length, tip: this.tip }
  }

  /** Rebuilds the chain from stored blocks (a restart, a reorg); each must come out with its hash. */
  replay(blocks: StoredBlock[]) {
    this.blocks = []
    this.state = emptyState(this.initialParameters)
    this.txsByHash.clear()
    this.txsByIdentifier.clear()
    this.txsById.clear()
    this.vaultActions = []
    this.checkpoints.clear()
    this.callNonces.clear()
    for (const block of blocks) {
      this.salt = Math.max(this.salt, block.salt)
      const replayed = this.appendBlock(block.bodies, block.timestamp, block.height === 0, block.salt, true)
      if (replayed.hash !== block.hash) throw new Error(`block ${block.height} replays to ${replayed.hash}, not its saved hash ${block.hash}`)
    }
  }

  /** The stored form of every block (for persistence). */
  storedBlocks(): StoredBlock[] {
    return this.blocks.map(stored)
  }

  // ---- internals ----

  /** Puts an accepted body into the mempool: `accepted` tells of it alone (`mempool`, of the whole mempool, follows a block or a reorg). */
  private accept(body: TxBody) {
    this.mempool.push(body)
    this.emit('accepted', body)
  }

  private findNonce(nonce: string): { hash: string; identifier: string } | undefined {
    const pending = this.mempool.find(body => body.type === 'regular' && body.call && body.nonce === nonce)
    if (pending) {
      const hash = hashOf(pending)
      return { hash, identifier: identifierOf(hash) }
    }
    const record = this.callNonces.get(nonce)
    return record ? { hash: record.hash, identifier: record.identifiers[0] } : undefined
  }

  /** A regular transaction's checks at submission: signatures, value conservation, inputs, DUST. */
  private checkRegular(body: RegularBody) {
    if (!body.unshielded && !body.shieldedOutputs && !body.call) throw new LedgerRejection(400, 'EMPTY_TRANSACTION', 'A transaction needs an offer, shielded outputs or a call')
    if (body.call) {
      if (body.call.sponsorKey !== body.payer) throw new LedgerRejection(400, 'INVALID_SPONSOR_SIGNATURE', 'The payer of a call is its sponsor')
      if (body.call.contractAddress !== this.vaultAddress) throw new LedgerRejection(404, 'UNKNOWN_CONTRACT', `No contract at ${body.call.contractAddress}; the vault is at ${this.vaultAddress}`)
      checkCallShape(body.call.call)
      checkCallSignatures(body.call)
    }
    if (body.unshielded || body.shieldedOutputs) {
      if (!body.payerSignature || !verifyDigest(body.payer, bodyDigest(body), body.payerSignature)) throw new LedgerRejection(400, 'INVALID_SIGNATURE', "The payer's signature does not verify over the transaction")
    }
    if (body.shieldedOutputs !== undefined && (!Number.isInteger(body.shieldedOutputs) || body.shieldedOutputs < 0 || body.shieldedOutputs > 16)) throw new LedgerRejection(400, 'INVALID_OUTPUT', 'shieldedOutputs must be 0 to 16')
    if (body.unshielded) this.checkOffer(body)
    const fee = feeOf(body, this.state.parameters)
    if (this.availableDust(body.payer) < fee) {
      const code = body.call && !body.unshielded ? 'SPONSOR_EXHAUSTED' : 'INSUFFICIENT_DUST'
      throw new LedgerRejection(code === 'SPONSOR_EXHAUSTED' ? 402 : 400, code, `The payer ${body.payer} has ${this.availableDust(body.payer)} DUST available, the fee is ${fee}`)
    }
  }

  private checkOffer(body: RegularBody) {
    const offer = body.unshielded!
    if (offer.signer !== body.payer) throw new LedgerRejection(400, 'INVALID_SIGNATURE', 'The unshielded offer is signed by its payer')
    if (!offer.inputs?.length || !offer.outputs?.length) throw new LedgerRejection(400, 'INVALID_OUTPUT', 'An unshielded offer spends at least one output and creates at least one')
    const owner = identityOf(offer.signer)
    const pendingSpent = new Set(this.mempool.flatMap(pending => (pending.type === 'regular' && pending.unshielded ? pending.unshielded.inputs.map(utxoKey) : [])))
    const totals = new Map<string, bigint>()
    const seen = new Set<string>()
    for (const input of offer.inputs) {
      const key = utxoKey(input)
      const utxo = this.state.utxos.get(key)
      if (seen.has(key)) throw new LedgerRejection(400, 'UTXO_SPENT', `The offer spends ${key} twice`)
      seen.add(key)
      if (!utxo) throw new LedgerRejection(400, this.state.spentBy.has(key) ? 'UTXO_SPENT' : 'UTXO_UNKNOWN', `No unspent output ${key}`)
      if (pendingSpent.has(key)) throw new LedgerRejection(400, 'UTXO_SPENT', `The output ${key} is spent by a pending transaction`)
      if (utxo.owner !== owner) throw new LedgerRejection(400, 'NOT_OWNER', `The output ${key} is not owned by the signer`)
      totals.set(utxo.tokenType, (totals.get(utxo.tokenType) ?? 0n) + BigInt(utxo.value))
    }
    for (const output of offer.outputs) {
      if (!/^[0-9a-f]{64}$/.test(output.owner ?? '') || !/^[0-9a-f]{64}$/.test(output.tokenType ?? '') || !/^[1-9][0-9]{0,38}$/.test(output.value ?? '')) throw new LedgerRejection(400, 'INVALID_OUTPUT', 'An output has an owner and a token type (32 bytes of hex each) and a positive integer value')
      totals.set(output.tokenType, (totals.get(output.tokenType) ?? 0n) - BigInt(output.value))
    }
    for (const [tokenType, difference] of totals) if (difference !== 0n) throw new LedgerRejection(400, 'VALUE_NOT_CONSERVED', `The offer ${difference > 0n ? 'loses' : 'creates'} ${difference < 0n ? -difference : difference} of token ${tokenType}`)
  }

  private appendBlock(bodies: TxBody[], timestamp: number, genesis: boolean, salt = this.salt, replaying = false): Block {
    const parent = genesis ? undefined : this.tip
    const height = parent ? parent.height + 1 : 0
    const { epochNo } = this.epochAt(timestamp)
    const author = this.producers[(epochNo + height) % PRODUCERS].publicKey
    const transactions: TxRecord[] = []
    for (const body of bodies) {
      const record = this.apply(body, height, timestamp)
      if (record) transactions.push(record)
      else if (replaying) throw new Error(`a transaction of block ${height} no longer applies`)
    }
    const hash = hashOf([parent?.hash ?? null, height, timestamp, author, salt, transactions.map(tx => tx.hash)])
    const block: Block = { hash, parentHash: parent?.hash ?? null, height, timestamp, salt, author, epochNo, parameters: this.state.parameters, transactions }
    this.blocks.push(block)
    for (const tx of transactions) {
      this.txsById.set(tx.id, tx)
      push(this.txsByHash, tx.hash, tx)
      for (const identifier of tx.identifiers) push(this.txsByIdentifier, identifier, tx)
      if (tx.body.type === 'regular' && tx.body.call) this.callNonces.set(tx.body.nonce, tx)
    }
    if (!replaying) this.emit('block', block)
    return block
  }

  /** Applies a body to the state at a block; answers its record, or undefined when it no longer applies. */
  private apply(body: TxBody, height: number, timestamp: number): TxRecord | undefined {
    const hash = hashOf(body)
    const state = this.state
    const base = { hash, body, height, created: [] as Utxo[], spent: [] as Utxo[], actions: [] as ContractActionRecord[] }
    const zswap = { startIndex: state.zswapSize, endIndex: state.zswapSize, root: state.zswapRoot, events: [] as { id: number; raw: string }[] }
    if (body.type === 'deploy') return this.applyDeploy(body, { ...base, hash: body.hash, zswap })
    if (body.type !== 'regular') return this.applySystem(body, { ...base, zswap }, timestamp)
    const fee = feeOf(body, state.parameters)
    if ((state.dust.get(body.payer) ?? 0n) < fee) return undefined
    const inputs = body.unshielded?.inputs.map(input => state.utxos.get(utxoKey(input)))
    if (inputs?.some(input => !input)) return undefined
    const id = state.nextTxId++
    state.dust.set(body.payer, state.dust.get(body.payer)! - fee)
    const record: TxRecord = {
      ...base, id, kind: 'RegularTransaction', identifiers: [identifierOf(hash)], zswap,
      result: null, fees: { paidFees: String(fee), estimatedFees: String((fee * 11n + 9n) / 10n) },
    }
    const segments: { id: number; success: boolean }[] = []
    if (body.unshielded || body.shieldedOutputs) {
      for (const input of inputs ?? []) {
        state.utxos.delete(utxoKey(input!))
        state.spentBy.set(utxoKey(input!), id)
        record.spent.push(input!)
      }
      record.created = this.createOutputs(body.unshielded?.outputs ?? [], hash, id, timestamp)
      this.addShieldedOutputs(record, body.shieldedOutputs ?? 0)
      segments.push({ id: 0, success: true })
    }
    if (body.call) segments.push({ id: 1, success: this.executeVaultCall(record, body.call, height) })
    const failed = segments.filter(segment => !segment.success).length
    record.result = { status: failed === 0 ? 'SUCCESS' : failed === segments.length ? 'FAILURE' : 'PARTIAL_SUCCESS', segments }
    return record
  }

  /** The vault's deployment: a regular transaction of its own hash and identifiers, without fee. */
  private applyDeploy(body: DeployBody, base: Omit<TxRecord, 'id' | 'kind' | 'identifiers' | 'result' | 'fees'>): TxRecord | undefined {
    if (body.address !== this.vaultAddress || this.state.deployed) return undefined
    const record: TxRecord = {
      ...base, id: this.state.nextTxId++, kind: 'RegularTransaction', identifiers: body.identifiers,
      result: { status: 'SUCCESS', segments: [{ id: 0, success: true }] }, fees: { paidFees: '0', estimatedFees: '0' },
    }
    this.state.deployed = true
    this.recordAction(record, { kind: 'ContractDeploy', txHash: record.hash, txId: record.id, height: record.height })
    return record
  }

  private applySystem(body: SystemBody, base: Omit<TxRecord, 'id' | 'kind' | 'identifiers' | 'result' | 'fees'>, timestamp: number): TxRecord {
    const state = this.state
    const record: TxRecord = { ...base, id: state.nextTxId++, kind: 'SystemTransaction', identifiers: [], result: null, fees: null }
    switch (body.type) {
      case 'mint':
        record.created = this.createOutputs(body.outputs, record.hash, record.id, timestamp)
        break
      case 'dust-grant':
        state.dust.set(body.publicKey, (state.dust.get(body.publicKey) ?? 0n) + BigInt(body.amount))
        break
      case 'parameters':
        state.parameters = body.parameters
        break
    }
    return record
  }

  private createOutputs(outputs: OutputSpec[], txHash: string, txId: number, ctime: number): Utxo[] {
    const intentHash = sha256Hex('intent:' + txHash)
    return outputs.map((output, outputIndex) => {
      const utxo: Utxo = { owner: output.owner, tokenType: output.tokenType, value: output.value, intentHash, outputIndex, ctime, createdTxId: txId }
      this.state.utxos.set(utxoKey(utxo), utxo)
      return utxo
    })
  }

  /** Shielded outputs: commitments appended to the zswap tree, one ledger event each; nothing else is public. */
  private addShieldedOutputs(record: TxRecord, count: number) {
    const state = this.state
    for (let i = 0; i < count; i++) {
      const commitment = sha256Hex(`commitment:${record.hash}:${i}`)
      state.zswapRoot = sha256Hex(state.zswapRoot + commitment)
      state.zswapSize++
      record.zswap.events.push({ id: state.zswapEvents++, raw: commitment })
    }
    record.zswap.endIndex = state.zswapSize
    record.zswap.root = state.zswapRoot
  }

  private executeVaultCall(record: TxRecord, call: SponsoredCall, height: number): boolean {
    try {
      this.state.vault = executeCall(this.state.vault, call.call, call, { height, txHash: record.hash })
    } catch (error) {
      if (!(error instanceof ExecutionFailure)) throw error
      record.failure = { code: error.code, message: error.message }
      return false
    }
    this.recordAction(record, { kind: 'ContractCall', call: call.call, attesterKey: call.attesterKey, sponsorKey: call.sponsorKey, txHash: record.hash, txId: record.id, height })
    return true
  }

  private recordAction(record: TxRecord, action: VaultAction) {
    const index = this.vaultActions.push(action) - 1
    record.actions.push({ kind: action.kind, address: this.vaultAddress, entryPoint: action.call?.circuit ?? null, index })
    if (index > 0 && index % CHECKPOINT_EVERY === 0) this.checkpoints.set(index, JSON.stringify(this.state.vault))
  }
}

const identifierOf = (hash: string) => sha256Hex('identifier:' + hash)

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

const stored = (block: Block): StoredBlock => ({ height: block.height, timestamp: block.timestamp, salt: block.salt, hash: block.hash, bodies: block.transactions.map(tx => tx.body) })
