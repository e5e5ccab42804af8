import { createHash } from 'node:crypto'
import type { SponsoredCall, VaultCall } from '../../srv/chains/chain-b/port.ts'
import { callDigest, sha256Hex, signDigest, type VaultKey } from '../../srv/chains/chain-b/vault.ts'
import { type Ledger, signBody } from './ledger.ts'
import { LedgerRejection, type RegularBody, type Utxo } from './types.ts'

/**
 * The devnet's activity generator (on in development, off in tests): after each block it submits
 * one transaction from accounts of its own — an unshielded transfer, a shielded transfer, a vault
 * call (that succeeds, or breaks a rule and fails), a transfer with a failing call (a partial
 * success), or a system transaction — so that a fresh devnet has something to read.
 */

type ActivityKind = 'unshielded' | 'shielded' | 'vault' | 'vaultFailure' | 'partial' | 'system'

interface ActivityEvent {
  kind: ActivityKind
  hash?: string
  rejected?: string
}

const LOW_DUST = 10n ** 17n

export class ActivityGenerator {
  private readonly ledger: Ledger
  private counter = 0
  private readonly anchored: string[] = []

  constructor(ledger: Ledger) {
    this.ledger = ledger
  }

  /** One transaction of the kind given, or of the next kind in turn. */
  round(kind: ActivityKind = this.nextKind()): ActivityEvent {
    this.counter++
    try {
      return { kind, hash: this.submit(kind) }
    } catch (error) {
      if (error instanceof LedgerRejection) return { kind, rejected: error.code }
      throw error
    }
  }

  private nextKind(): ActivityKind {
    const roll = this.random() % 10
    return roll < 3 ? 'unshielded' : roll < 5 ? 'shielded' : roll < 7 ? 'vault' : roll < 8 ? 'vaultFailure' : roll < 9 ? 'partial' : 'system'
  }

  private submit(kind: ActivityKind): string {
    const ledger = this.ledger
    switch (kind) {
      case 'unshielded':
        return ledger.submit(this.transfer(this.account(), this.account(1))).hash
      case 'shielded': {
        const payer = this.account()
        return ledger.submit(signBody({ type: 'regular', nonce: this.nonce(), payer: payer.publicKey, shieldedOutputs: 2 }, payer)).hash
      }
      case 'vault': {
        const payloadHash = sha256Hex(this.nonce())
        const earlier = this.anchored.at(-1)
        const call: VaultCall = earlier && this.counter % 3 === 0
          ? { circuit: 'grantDisclosure', args: { payloadHash: earlier, grantee: sha256Hex('grantee:' + this.counter), level: this.counter % 3 } }
          : { circuit: 'attest', args: { payloadHash, metadataHash: sha256Hex('metadata:' + payloadHash) } }
        if (call.circuit === 'attest') this.anchored.push(payloadHash)
        return ledger.submitCall(this.sponsored(call, ledger.activitySponsor)).hash
      }
      case 'vaultFailure': {
        // Anchoring a document that is anchored already breaks the insert-once rule: included as a FAILURE.
        const payloadHash = this.anchored[0] ?? sha256Hex('never-anchored')
        const call: VaultCall = this.anchored.length ? { circuit: 'attest', args: { payloadHash, metadataHash: sha256Hex('again') } } : { circuit: 'revokeDisclosure', args: { payloadHash, grantee: payloadHash } }
        return ledger.submitCall(this.sponsored(call, ledger.activitySponsor)).hash
      }
      case 'partial': {
        const payer = this.account()
        const transfer = this.transfer(payer, this.account(1), false)
        const call = this.sponsored({ circuit: 'revokeDisclosure', args: { payloadHash: sha256Hex('no-such-document'), grantee: sha256Hex('nobody') } }, payer)
        return ledger.submit(signBody({ ...transfer, call }, payer)).hash
      }
      case 'system': {
        const poor = [...ledger.accounts, ledger.activitySponsor].find(key => ledger.availableDust(key.publicKey) < LOW_DUST)
        if (poor) return ledger.grantDust(poor.publicKey, 10n ** 20n).hash
        ledger.submitSystem({ type: 'parameters', parameters: ledger.parameters, nonce: this.nonce() })
        return ledger.mempool.length ? sha256Hex(JSON.stringify(ledger.mempool.at(-1))) : ''
      }
    }
  }

  /** Spends one unspent output of `from`, half to `to` and the rest back. */
  private transfer(from: VaultKey, to: VaultKey, sign = true): RegularBody {
    const pending = new Set(this.ledger.mempool.flatMap(body => (body.type === 'regular' && body.unshielded ? body.unshielded.inputs.map(i => `${i.intentHash}#${i.outputIndex}`) : [])))
    const spendable = this.ledger.unspentOutputs(from.id).filter((utxo: Utxo) => !pending.has(`${utxo.intentHash}#${utxo.outputIndex}`) && BigInt(utxo.value) > 1n)
    const input = spendable[this.random() % Math.max(1, spendable.length)]
    if (!input) throw new LedgerRejection(400, 'UTXO_UNKNOWN', 'The account has no spendable output')
    const value = BigInt(input.value)
    const sent = value / 2n
    const body: RegularBody = {
      type: 'regular', nonce: this.nonce(), payer: from.publicKey,
      unshielded: {
        signer: from.publicKey,
        inputs: [{ intentHash: input.intentHash, outputIndex: input.outputIndex }],
        outputs: [{ owner: to.id, tokenType: input.tokenType, value: String(sent) }, { owner: from.id, tokenType: input.tokenType, value: String(value - sent) }],
      },
    }
    return sign ? signBody(body, from) : body
  }

  private sponsored(call: VaultCall, sponsor: VaultKey): SponsoredCall {
    const nonce = this.nonce()
    const attester = this.ledger.activityAttester
    const digest = callDigest(this.ledger.vaultAddress, call, nonce)
    return { contractAddress: this.ledger.vaultAddress, call, nonce, attesterKey: attester.publicKey, signature: signDigest(attester, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) }
  }

  private account(offset = 0): VaultKey {
    const accounts = this.ledger.accounts
    return accounts[(this.ledger.tip.height + this.counter + offset) % accounts.length]
  }

  private nonce() {
    return `activity-${this.ledger.seed.length}-${this.ledger.tip.height}-${this.counter}-${this.random()}`
  }

  private random(): number {
    return createHash('sha256').update(`${this.ledger.seed}:${this.ledger.tip.hash}:${this.counter}:${Math.random()}`).digest().readUInt32BE(0)
  }
}
