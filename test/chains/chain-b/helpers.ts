import { createHash } from 'node:crypto'
import { Ledger } from '../../../devnet/chain-b/ledger.ts'
import type { SponsoredCall, VaultCall } from '../../../srv/chains/chain-b/port.ts'
import { midnightLedgerDefaults, vaultDeployment, type MidnightLedgerDefaults, type VaultDeployment } from '../../../srv/chains/chain-b/vault-codec.ts'
import { callDigest, sha256Hex, signDigest, vaultKeyFromSeed, type VaultKey } from '../../../srv/chains/chain-b/vault.ts'

/** Shared helpers of the chain-B devnet suites: keys, signed calls, a fresh ledger with a funded sponsor. */

export const key = (name: string): VaultKey => vaultKeyFromSeed(createHash('sha256').update(name).digest())
export const hash = (text: string) => sha256Hex(text)

let counter = 0
export function signedCall(ledger: Ledger, call: VaultCall, attester: VaultKey, sponsor: VaultKey, nonce = `test-nonce-${++counter}`): SponsoredCall {
  const digest = callDigest(ledger.vaultAddress, call, nonce)
  return { contractAddress: ledger.vaultAddress, call, nonce, attesterKey: attester.publicKey, signature: signDigest(attester, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) }
}

/** The vault's deployment of the suites' ledgers, made once per file before its tests (it takes the ledger's WebAssembly). */
let deployment: VaultDeployment | undefined
let midnight: MidnightLedgerDefaults | undefined
beforeAll(async () => {
  deployment = await vaultDeployment(LEDGER_SEED)
  midnight = await midnightLedgerDefaults()
})

const LEDGER_SEED = 'ledger-test'

export function newLedger(): { ledger: Ledger; sponsor: VaultKey } {
  if (!deployment || !midnight) throw new Error('newLedger() is for tests: the vault deployment and the ledger defaults are made before them')
  const ledger = new Ledger({ seed: LEDGER_SEED, epochLength: 60, genesisTimestamp: 1_700_000_000, vault: deployment, midnight })
  ledger.createGenesis()
  const sponsor = key('sponsor')
  ledger.grantDust(sponsor.publicKey, 10n ** 18n)
  ledger.produceBlock()
  return { ledger, sponsor }
}

/** Submits a call, produces a block, answers the transaction's record. */
export function execute(ledger: Ledger, call: VaultCall, attester: VaultKey, sponsor: VaultKey) {
  const { hash } = ledger.submitCall(signedCall(ledger, call, attester, sponsor))
  ledger.produceBlock()
  return ledger.transactionsByHash(hash)[0]
}

/** The rejection a function throws (its status and code). */
export function rejection(fn: () => unknown): { status: number; code: string } {
  try {
    fn()
  } catch (error) {
    const { status, code } = error as { status: number; code: string }
    return { status, code }
  }
  throw new Error('expected a rejection')
}
