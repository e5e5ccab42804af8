import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { baseAddress, drepIdOf, poolIdOf, stakeAddressOfKey } from './addresses.ts'
import { blake2b256Hex, deriveKey, seedBytes, toHex } from './crypto.ts'
import { PROTOCOL_PARAMETERS } from './params.ts'
import type { Certificate, LedgerTx, OutputData, PoolParams } from './types.ts'
import { lovelace } from '../../srv/chains/chain-a/value.ts'

/**
 * The genesis of the devnet, derived entirely from the seed: funded test wallets, the activity
 * generator's wallets, three registered stake pools and three DReps, with every wallet's stake
 * registered and delegated. The distribution is expressed as genesis transactions (no inputs,
 * pseudo hashes) so that the same ledger code applies them and the API can show them.
 */

const ADA = 1_000_000n

export interface TextEnvelope {
  type: string
  description: string
  cborHex: string
}

/** A funded wallet as printed for users and tests: a base address with a registered stake key. */
export interface DevnetWallet {
  name: string
  address: string
  stakeAddress: string
  paymentKeyHash: string
  signingKey: TextEnvelope
  stakeSigningKey: TextEnvelope
}

export interface WalletKeys {
  name: string
  payment: CSL.PrivateKey
  stake: CSL.PrivateKey
  address: string
  stakeAddress: string
}

export interface GenesisPool {
  id: string
  params: PoolParams
  vrfKey: Uint8Array
  owner: WalletKeys
}

export interface GenesisDrep {
  id: string
  hex: string
}

export interface Genesis {
  testWallets: WalletKeys[]
  activityWallets: WalletKeys[]
  /** Signs the activity generator's minting policy. */
  policyKey: CSL.PrivateKey
  pools: GenesisPool[]
  dreps: GenesisDrep[]
  transactions: LedgerTx[]
}

const TEST_WALLET_UTXOS = [5000n, 2500n, 1500n, 1000n].map(ada => ada * ADA)
const ACTIVITY_WALLET_UTXOS = [200_000n, 100_000n, 50_000n, 25_000n, 25_000n].map(ada => ada * ADA)
const ACTIVITY_WALLETS = 3

const POOLS = [
  { ticker: 'DEVA', name: 'Devnet Pool Alpha', pledge: 1_000_000n, cost: 170n, marginPpm: 10_000n },
  { ticker: 'DEVB', name: 'Devnet Pool Beta', pledge: 2_000_000n, cost: 340n, marginPpm: 25_000n },
  { ticker: 'DEVC', name: 'Devnet Pool Gamma', pledge: 3_000_000n, cost: 500n, marginPpm: 50_000n },
]
const DREPS = 3

export function deriveWallet(seed: string, purpose: string, name: string): WalletKeys {
  const payment = deriveKey(seed, `${purpose}:payment`)
  const stake = deriveKey(seed, `${purpose}:stake`)
  return { name, payment, stake, address: baseAddress(payment, stake), stakeAddress: stakeAddressOfKey(stake) }
}

const envelope = (type: string, description: string, key: CSL.PrivateKey): TextEnvelope =>
  ({ type, description, cborHex: '5820' + toHex(key.as_bytes()) })

export function describeWallet(wallet: WalletKeys): DevnetWallet {
  return {
    name: wallet.name,
    address: wallet.address,
    stakeAddress: wallet.stakeAddress,
    paymentKeyHash: wallet.payment.to_public().hash().to_hex(),
    signingKey: envelope('PaymentSigningKeyShelley_ed25519', 'Payment Signing Key', wallet.payment),
    stakeSigningKey: envelope('StakeSigningKeyShelley_ed25519', 'Stake Signing Key', wallet.stake),
  }
}

function derivePool(seed: string, index: number): GenesisPool {
  const spec = POOLS[index]
  const hex = deriveKey(seed, `pool:${index}:cold`).to_public().hash().to_hex()
  const vrfKey = seedBytes(seed, `pool:${index}:vrf`)
  const owner = deriveWallet(seed, `pool:${index}:owner`, `pool-owner-${index + 1}`)
  const document = JSON.stringify({ name: spec.name, description: `${spec.name}, a stake pool of the local devnet.`, ticker: spec.ticker, homepage: `https://devnet.invalid/${spec.ticker.toLowerCase()}` })
  const metadata = JSON.parse(document)
  return {
    id: poolIdOf(hex),
    vrfKey,
    owner,
    params: {
      hex,
      vrfKeyHash: blake2b256Hex(vrfKey),
      pledge: spec.pledge * ADA,
      cost: spec.cost * ADA,
      marginPpm: spec.marginPpm,
      rewardAccount: owner.stakeAddress,
      owners: [owner.stakeAddress],
      // The metadata document is not served anywhere; its hash is the real hash of the document.
      metadata: { url: `https://devnet.invalid/pools/${spec.ticker.toLowerCase()}.json`, hash: blake2b256Hex(document), ...metadata },
    },
  }
}

function deriveDrep(seed: string, index: number): GenesisDrep {
  const hex = deriveKey(seed, `drep:${index}`).to_public().hash().to_hex()
  return { id: drepIdOf(hex), hex }
}

/** A genesis transaction's hash; a chain's own nonce, when it has one, makes its hashes its own. */
const pseudoTxHash = (nonce: string | undefined, tag: string, address: string) =>
  blake2b256Hex(nonce === undefined ? `genesis:${tag}:${address}` : `genesis:${nonce}:${tag}:${address}`)

function genesisTx(hash: string, outputs: OutputData[], certificates: Certificate[]): LedgerTx {
  const deposit = certificates.reduce((sum, cert) =>
    sum + (cert.kind === 'registration' || cert.kind === 'drep_registration' ? cert.deposit : cert.kind === 'pool_registration' ? PROTOCOL_PARAMETERS.poolDeposit : 0n), 0n)
  return {
    hash, cbor: null, size: 0, fee: 0n, deposit, treasuryDonation: 0n, invalidBefore: null, invalidHereafter: null,
    inputs: [], referenceInputs: [], collateral: [], outputs, collateralReturn: null, validContract: true, mint: new Map(), metadata: [], withdrawals: [], certificates, redeemerCount: 0,
  }
}

function walletOutputs(wallet: WalletKeys, amounts: bigint[]): OutputData[] {
  const payment = { type: 'key' as const, hash: wallet.payment.to_public().hash().to_hex() }
  return amounts.map(coin => ({ address: wallet.address, payment, stakeAddress: wallet.stakeAddress, value: lovelace(coin), dataHash: null, inlineDatum: null, referenceScriptHash: null, referenceScript: null }))
}

const stakeCertificates = (wallet: WalletKeys, pool: string, drep: string | null): Certificate[] => [
  { kind: 'registration', stakeAddress: wallet.stakeAddress, deposit: PROTOCOL_PARAMETERS.keyDeposit, explicitDeposit: false },
  { kind: 'delegation', stakeAddress: wallet.stakeAddress, pool },
  ...(drep ? [{ kind: 'vote_delegation' as const, stakeAddress: wallet.stakeAddress, drep }] : []),
]

export function buildGenesis(seed: string, walletCount: number, nonce?: string): Genesis {
  const testWallets = Array.from({ length: walletCount }, (_, i) => deriveWallet(seed, `wallet:${i + 1}`, `wallet-${i + 1}`))
  const activityWallets = Array.from({ length: ACTIVITY_WALLETS }, (_, i) => deriveWallet(seed, `activity:${i + 1}`, `activity-${i + 1}`))
  const pools = POOLS.map((_, i) => derivePool(seed, i))
  const dreps = Array.from({ length: DREPS }, (_, i) => deriveDrep(seed, i))
  const poolAt = (i: number) => pools[i % pools.length].params.hex
  const drepAt = (i: number) => dreps[i % dreps.length].hex

  const transactions: LedgerTx[] = [
    ...pools.map(pool => genesisTx(pseudoTxHash(nonce, 'pool', pool.id), walletOutputs(pool.owner, [pool.params.pledge]), [
      { kind: 'pool_registration', pool: pool.params },
      ...stakeCertificates(pool.owner, pool.params.hex, null),
    ])),
    genesisTx(pseudoTxHash(nonce, 'dreps', dreps.map(d => d.id).join()), [], dreps.map(d => ({ kind: 'drep_registration' as const, drep: d.hex, deposit: PROTOCOL_PARAMETERS.drepDeposit }))),
    ...testWallets.map((wallet, i) => genesisTx(pseudoTxHash(nonce, 'wallet', wallet.address), walletOutputs(wallet, TEST_WALLET_UTXOS), stakeCertificates(wallet, poolAt(i), drepAt(i)))),
    ...activityWallets.map((wallet, i) => genesisTx(pseudoTxHash(nonce, 'wallet', wallet.address), walletOutputs(wallet, ACTIVITY_WALLET_UTXOS), stakeCertificates(wallet, poolAt(i + 1), drepAt(i + 1)))),
  ]
  return { testWallets, activityWallets, policyKey: deriveKey(seed, 'activity:policy'), pools, dreps, transactions }
}
