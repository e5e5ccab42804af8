import { refOf } from '../../srv/chains/chain-a/csl.ts'
import { createdOutputs, spentRefs, type LedgerTx, type OutputData } from './types.ts'
import type { AccountState, LedgerView } from './candidate.ts'

/**
 * The ledger as it will be once some not-yet-included transactions are applied: spent inputs
 * disappear, new outputs appear and certificates and withdrawals change accounts. The mempool
 * validates new submissions against it (so transactions may chain on pending outputs), and block
 * production re-validates the mempool against a fresh one at the block's slot.
 */
export class PendingView implements LedgerView {
  private readonly base: LedgerView
  private readonly spent = new Set<string>()
  private readonly created = new Map<string, OutputData & { ref: string }>()
  private readonly accounts = new Map<string, AccountState>()
  private readonly recorded = new Set<string>()

  constructor(base: LedgerView) {
    this.base = base
  }

  output(ref: string) {
    if (this.spent.has(ref)) return undefined
    return this.created.get(ref) ?? this.base.output(ref)
  }

  account(stakeAddress: string) {
    return this.accounts.get(stakeAddress) ?? this.base.account(stakeAddress)
  }

  poolRegistered(hex: string) {
    return this.base.poolRegistered(hex)
  }

  drepRegistered(key: string) {
    return this.base.drepRegistered(key)
  }

  transactionLocation(hash: string) {
    return this.recorded.has(hash) ? 'mempool' as const : this.base.transactionLocation(hash)
  }

  /** Pending outputs at an address, for wallets that build on top of the mempool. */
  createdAt(address: string) {
    return [...this.created.values()].filter(output => output.address === address && !this.spent.has(output.ref))
  }

  isSpent(ref: string) {
    return this.spent.has(ref)
  }

  record(tx: LedgerTx) {
    this.recorded.add(tx.hash)
    for (const ref of spentRefs(tx)) this.spent.add(ref)
    for (const [index, output] of createdOutputs(tx)) {
      const ref = refOf({ txHash: tx.hash, outputIndex: index })
      this.created.set(ref, { ...output, ref })
    }
    if (!tx.validContract) return
    const update = (stakeAddress: string, change: Partial<AccountState>) => {
      const current = this.account(stakeAddress) ?? { registered: false, deposit: 0n, rewards: 0n, drep: null }
      this.accounts.set(stakeAddress, { ...current, ...change })
    }
    for (const cert of tx.certificates) {
      if (cert.kind === 'registration') update(cert.stakeAddress, { registered: true, deposit: cert.deposit, rewards: 0n, drep: null })
      if (cert.kind === 'deregistration') update(cert.stakeAddress, { registered: false })
      if (cert.kind === 'vote_delegation') update(cert.stakeAddress, { drep: cert.drep })
    }
    for (const { stakeAddress, amount } of tx.withdrawals) update(stakeAddress, { rewards: (this.account(stakeAddress)?.rewards ?? 0n) - amount })
  }
}
