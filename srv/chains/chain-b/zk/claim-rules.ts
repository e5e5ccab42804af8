import { SLOTS } from './content.ts'

/**
 * What a claim's public statement must be, whichever way it enters (proven by the service,
 * proven by the caller and sponsored, recorded by the vault) and whenever it is judged (the verify
 * lane): well formed, and not vacuous, i.e. not true of every pair of documents or every value,
 * which a proof would "prove" without saying anything about the document.
 */

type RuleFailure = { code: 'VACUOUS_CLAIM' | 'INVALID_PUBLIC_SIGNALS'; message: string }

const MAX_UINT = 2n ** 64n - 1n
const ALL_SLOTS = (1n << BigInt(SLOTS)) - 1n

/**
 * `fieldCounts`: how many proof fields each document's anchored root holds (slots 0 to count - 1;
 * the rest are padding that never differs), as the vault records it; undefined counts as all 16.
 */
export function claimRuleFailure(circuit: string, signals: Record<string, bigint>, fieldCounts: (number | undefined)[] = []): RuleFailure | undefined {
  if (circuit === 'field_predicate') {
    const { op, threshold } = signals
    if (op < 0n || op > 3n) return { code: 'INVALID_PUBLIC_SIGNALS', message: 'op must be 0 (lessOrEqual), 1 (greaterOrEqual), 2 (lessThan) or 3 (greaterThan)' }
    if ((op === 1n && threshold === 0n) || (op === 0n && threshold >= MAX_UINT))
      return { code: 'VACUOUS_CLAIM', message: 'the predicate holds for every value a field can have: it says nothing about the document' }
    return undefined
  }
  if (circuit !== 'document_compare') return undefined
  const { mode, mask, k } = signals
  if (mode === 0n) {
    if (k !== 0n || mask > ALL_SLOTS) return { code: 'INVALID_PUBLIC_SIGNALS', message: `an integrity claim has k = 0 and a mask below 2^${SLOTS}` }
    const fields = Math.min(SLOTS, ...fieldCounts.map(count => count ?? SLOTS))
    const constrained = Array.from({ length: fields }, (_, slot) => slot).some(slot => !(mask & (1n << BigInt(slot))))
    if (!constrained) return { code: 'VACUOUS_CLAIM', message: 'allowedMask lets every proof field of the documents differ: the claim holds for any two documents' }
    return undefined
  }
  if (mode === 1n) {
    if (mask !== 0n || k > BigInt(SLOTS)) return { code: 'INVALID_PUBLIC_SIGNALS', message: `a diff claim has mask 0 and k of at most ${SLOTS}` }
    if (k === 0n) return { code: 'VACUOUS_CLAIM', message: 'k = 0 holds for any two documents: ask for k of 1 or more' }
    return undefined
  }
  return { code: 'INVALID_PUBLIC_SIGNALS', message: 'mode must be 0 (integrity) or 1 (diff)' }
}
