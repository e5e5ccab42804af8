import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { bigNum, cslAddress, transactionBuilderConfig } from '../../srv/chains/chain-a/csl.ts'
import { seededRandom } from './crypto.ts'
import type { WalletKeys } from './genesis.ts'
import type { Ledger } from './ledger.ts'
import { signaturePolicy, signTransaction, spendableOutputs, toUnspentOutput, toUnspentOutputs } from './wallet.ts'

/**
 * Background traffic so that the devnet looks like a live chain: ADA transfers among the
 * generator's own wallets and to the test wallets, token mints (CIP-25) and burns, CIP-20
 * messages and other metadata. It only ever spends its own wallets, builds transactions with
 * CSL's TransactionBuilder and submits them through the same validation as everyone else.
 * All choices come from a PRNG seeded with the devnet seed.
 */

export type ActivityKind = 'transfer' | 'payTestWallet' | 'mint' | 'burn' | 'message' | 'metadata' | 'consolidate'

export interface ActivityEvent {
  kind: ActivityKind
  wallet: string
  txHash: string | null
  /** Why the round did nothing (e.g. the wallet ran low); rounds never throw. */
  skipped: string | null
}

const ADA = 1_000_000n
const TTL_SLOTS = 600
const CONSOLIDATE_ABOVE = 30
const MESSAGES = ['gm from the devnet', 'paying for coffee', 'rent share for May', 'thanks for the help!', 'invoice 2024-117 settled', 'test payment, please ignore']
const LABELS = ['1967', '309', '6676', '1337']

const ACTIONS: [ActivityKind, number][] = [['transfer', 30], ['payTestWallet', 20], ['mint', 20], ['burn', 10], ['message', 10], ['metadata', 10]]

export class ActivityGenerator {
  readonly events: ActivityEvent[] = []
  private readonly ledger: Ledger
  private readonly wallets: WalletKeys[]
  private readonly testWallets: WalletKeys[]
  private readonly policyKey: CSL.PrivateKey
  private readonly policy: CSL.NativeScript
  private readonly random: () => number
  private readonly config: CSL.TransactionBuilderConfig
  private tokenCounter = 0
  private blocksUntilNextRound = 1

  constructor(ledger: Ledger) {
    this.ledger = ledger
    this.wallets = ledger.genesis.activityWallets
    this.testWallets = ledger.genesis.testWallets
    this.policyKey = ledger.genesis.policyKey
    this.policy = signaturePolicy(this.policyKey)
    // A chain resumed from disk goes on with new choices and new token names, not those of its first start.
    this.random = seededRandom(ledger.seed, ledger.blocks.length > 1 ? `activity:${ledger.tip.hash}` : 'activity')
    this.tokenCounter = [...ledger.assets.keys()].filter(unit => unit.startsWith(this.policyId)).length
    this.config = transactionBuilderConfig(ledger.params)
  }

  get policyId(): string {
    return this.policy.hash().to_hex()
  }

  /** Called after every block: runs a round every few blocks. */
  afterBlock() {
    if (--this.blocksUntilNextRound > 0) return
    this.round()
    this.blocksUntilNextRound = 1 + Math.floor(this.random() * 3)
  }

  /** One round: one transaction of a randomly chosen kind (or a consolidation when a wallet is fragmented). */
  round(): ActivityEvent {
    const wallet = this.pick(this.wallets)
    const kind = this.adaOnly(wallet).length > CONSOLIDATE_ABOVE ? 'consolidate' : this.pickAction()
    let event: ActivityEvent
    try {
      event = { kind, wallet: wallet.name, txHash: this.perform(kind, wallet), skipped: null }
    } catch (error) {
      event = { kind, wallet: wallet.name, txHash: null, skipped: (error as Error).message ?? String(error) }
    }
    this.events.push(event)
    if (this.events.length > 1000) this.events.shift()
    return event
  }

  private perform(kind: ActivityKind, wallet: WalletKeys): string {
    switch (kind) {
      case 'transfer': return this.pay(wallet, this.pick(this.wallets.filter(w => w !== wallet)).address, this.amount(1, 50))
      case 'payTestWallet': return this.pay(wallet, this.pick(this.testWallets).address, this.amount(1, 20))
      case 'mint': return this.mint(wallet)
      case 'burn': return this.burn(wallet)
      case 'message': return this.submit(wallet, builder => builder.add_json_metadatum(bigNum(674), JSON.stringify({ msg: [this.pick(MESSAGES)] })))
      case 'metadata': return this.submit(wallet, builder => builder.add_json_metadatum(bigNum(Number(this.pick(LABELS))), JSON.stringify({ source: 'devnet-activity', sequence: this.events.length, reading: Math.floor(this.random() * 10_000) })))
      case 'consolidate': return this.submit(wallet, () => {}, this.adaOnly(wallet).slice(0, CONSOLIDATE_ABOVE))
    }
  }

  private pay(wallet: WalletKeys, to: string, lovelace: bigint): string {
    return this.submit(wallet, builder => builder.add_output(CSL.TransactionOutput.new(cslAddress(to), CSL.Value.new(bigNum(lovelace)))))
  }

  private mint(wallet: WalletKeys): string {
    const serial = ++this.tokenCounter
    const name = `DevnetToken${serial}`
    const quantity = this.random() < 0.5 ? 1n : BigInt(1000 + Math.floor(this.random() * 1_000_000))
    const cip25 = { [this.policyId]: { [name]: { name: `Devnet Token #${serial}`, image: `ipfs://devnet/token-${serial}.png`, mediaType: 'image/png', description: 'Minted by the devnet activity generator' } }, version: '1.0' }
    // Each mint gets its own output, so no change output accumulates a growing bundle of tokens.
    const output = CSL.TransactionOutputBuilder.new().with_address(cslAddress(wallet.address)).next()
    return this.submit(wallet, builder => {
      builder.add_mint_asset_and_output_min_required_coin(this.policy, CSL.AssetName.new(Buffer.from(name)), CSL.Int.new(bigNum(quantity)), output)
      builder.add_json_metadatum(bigNum(721), JSON.stringify(cip25))
    }, [], [this.policyKey])
  }

  private burn(wallet: WalletKeys): string {
    const holding = spendableOutputs(this.ledger, wallet.address).find(output => [...output.value.assets.keys()].some(unit => unit.startsWith(this.policyId)))
    if (!holding) throw new Error('no tokens of the generator policy to burn')
    // The whole holding is burned, so the change carries no tokens and stays spendable for payments.
    const [unit, quantity] = [...holding.value.assets].find(([u]) => u.startsWith(this.policyId))!
    const utxo = toUnspentOutput(holding)
    return this.submit(wallet, builder => {
      builder.add_regular_input(cslAddress(wallet.address), utxo.input(), utxo.output().amount())
      builder.add_mint_asset(this.policy, CSL.AssetName.new(Buffer.from(unit.slice(56), 'hex')), CSL.Int.new_negative(bigNum(quantity)))
    }, [], [this.policyKey])
  }

  /** Builds, balances (change back to the wallet), signs and submits a transaction. */
  private submit(wallet: WalletKeys, shape: (builder: CSL.TransactionBuilder) => void, inputs: ReturnType<typeof spendableOutputs> = [], extraKeys: CSL.PrivateKey[] = []): string {
    const builder = CSL.TransactionBuilder.new(this.config)
    builder.set_ttl_bignum(bigNum(this.ledger.nextSlot() + TTL_SLOTS))
    shape(builder)
    const address = cslAddress(wallet.address)
    for (const output of inputs) {
      const utxo = toUnspentOutput(output)
      builder.add_regular_input(address, utxo.input(), utxo.output().amount())
    }
    if (inputs.length === 0) builder.add_inputs_from(toUnspentOutputs(this.adaOnly(wallet)), CSL.CoinSelectionStrategyCIP2.LargestFirstMultiAsset)
    builder.add_change_if_needed(address)
    return this.ledger.submit(signTransaction(builder.build_tx(), [wallet.payment, ...extraKeys]))
  }

  /** Outputs without tokens pay for transactions; token outputs are only spent to burn them. */
  private adaOnly(wallet: WalletKeys) {
    return spendableOutputs(this.ledger, wallet.address).filter(output => output.value.assets.size === 0)
  }

  private pickAction(): ActivityKind {
    let point = this.random() * ACTIONS.reduce((sum, [, weight]) => sum + weight, 0)
    for (const [kind, weight] of ACTIONS) {
      if (point < weight) return kind
      point -= weight
    }
    return 'transfer'
  }

  private pick<T>(items: T[]): T {
    return items[Math.floor(this.random() * items.length)]
  }

  private amount(minAda: number, maxAda: number): bigint {
    return BigInt(minAda + Math.floor(this.random() * (maxAda - minAda + 1))) * ADA
  }
}
