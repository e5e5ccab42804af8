import { refOf } from '../csl.ts'
import type { ChainUtxo } from '../port.ts'
import { addValue, lovelace, subtractValues, valueOfUtxo, type Value } from '../value.ts'

/**
 * Coin selection, largest first: for each asset the transaction needs, the UTxOs holding most of
 * it; then the UTxOs holding most lovelace until the lovelace needed plus the minimum ADA of the
 * change is covered. Deterministic: ties go to the lower output reference.
 */

export interface Selection {
  inputs: ChainUtxo[]
  /** Lovelace the inputs had to cover, the change's minimum included. */
  neededCoin: bigint
  /** What is still missing when the candidates are not enough (null when covered). */
  shortfall: Value | null
}

const byRef = (a: ChainUtxo, b: ChainUtxo) => refOf(a).localeCompare(refOf(b))

/**
 * `target` is what the inputs must provide (what the transaction pays out and burns, plus the fee,
 * less what script inputs and mints bring); `changeMinimum` answers the minimum ADA of a change
 * output holding the given leftover.
 */
export function selectInputs(candidates: ChainUtxo[], target: Value, changeMinimum: (leftover: Value) => bigint): Selection {
  const inputs: ChainUtxo[] = []
  const total = lovelace(0n)
  const take = (utxo: ChainUtxo) => {
    inputs.push(utxo)
    addValue(total, valueOfUtxo(utxo))
  }
  const remaining = () => candidates.filter(utxo => !inputs.includes(utxo))

  const wantedAssets = [...target.assets].filter(([, quantity]) => quantity > 0n).sort(([a], [b]) => a.localeCompare(b))
  for (const [unit, quantity] of wantedAssets) {
    const held = (utxo: ChainUtxo) => BigInt(utxo.assets.find(a => a.unit === unit)?.quantity ?? 0)
    while ((total.assets.get(unit) ?? 0n) < quantity) {
      const best = remaining().filter(utxo => held(utxo) > 0n)
        .sort((a, b) => (held(b) > held(a) ? 1 : held(b) < held(a) ? -1 : byRef(a, b)))[0]
      if (!best) break
      take(best)
    }
  }

  const neededCoin = () => target.coin + changeMinimum(subtractValues(total, target))
  for (;;) {
    if (total.coin >= neededCoin()) break
    const best = remaining().sort((a, b) => {
      const [coinA, coinB] = [BigInt(a.lovelace), BigInt(b.lovelace)]
      return coinB > coinA ? 1 : coinB < coinA ? -1 : byRef(a, b)
    })[0]
    if (!best) break
    take(best)
  }

  const missing: Value = { coin: neededCoin() - total.coin, assets: new Map() }
  for (const [unit, quantity] of wantedAssets) {
    const short = quantity - (total.assets.get(unit) ?? 0n)
    if (short > 0n) missing.assets.set(unit, short)
  }
  const covered = missing.coin <= 0n && missing.assets.size === 0
  return { inputs, neededCoin: neededCoin(), shortfall: covered ? null : { coin: missing.coin > 0n ? missing.coin : 0n, assets: missing.assets } }
}

/**
 * Collateral: the largest ADA-only UTxOs, at most `maxInputs`, until `required` lovelace is covered.
 * Answers null when that is not possible.
 */
export function selectCollateral(candidates: ChainUtxo[], required: bigint, maxInputs: number): ChainUtxo[] | null {
  const pool = candidates.filter(utxo => utxo.assets.length === 0)
    .sort((a, b) => (BigInt(b.lovelace) > BigInt(a.lovelace) ? 1 : BigInt(b.lovelace) < BigInt(a.lovelace) ? -1 : byRef(a, b)))
  const chosen: ChainUtxo[] = []
  let sum = 0n
  for (const utxo of pool) {
    if (sum >= required || chosen.length === maxInputs) break
    chosen.push(utxo)
    sum += BigInt(utxo.lovelace)
  }
  return sum >= required ? chosen : null
}
