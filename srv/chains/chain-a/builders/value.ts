import type { AssetQuantity, ChainUtxo } from '../port.ts'

/** Lovelace plus native assets by unit (policy id hex + asset name hex); quantities may be negative in sums. */
export interface Value {
  coin: bigint
  assets: Map<string, bigint>
}

export const lovelace = (coin: bigint): Value => ({ coin, assets: new Map() })

export function addValues(...values: Value[]): Value {
  const sum = lovelace(0n)
  for (const value of values) {
    sum.coin += value.coin
    for (const [unit, quantity] of value.assets) {
      const total = (sum.assets.get(unit) ?? 0n) + quantity
      if (total === 0n) sum.assets.delete(unit)
      else sum.assets.set(unit, total)
    }
  }
  return sum
}

export const negate = (value: Value): Value => ({ coin: -value.coin, assets: new Map([...value.assets].map(([unit, q]) => [unit, -q])) })

export const subtractValues = (a: Value, b: Value) => addValues(a, negate(b))

/** The part of a value that is positive (what still has to be found), per component. */
export function positivePart(value: Value): Value {
  return { coin: value.coin > 0n ? value.coin : 0n, assets: new Map([...value.assets].filter(([, q]) => q > 0n)) }
}

export const valueOfUtxo = (utxo: ChainUtxo): Value => ({ coin: BigInt(utxo.lovelace), assets: new Map(utxo.assets.map(a => [a.unit, BigInt(a.quantity)])) })

export const assetList = (assets: Map<string, bigint>): AssetQuantity[] =>
  [...assets].sort(([a], [b]) => a.localeCompare(b)).map(([unit, quantity]) => ({ unit, quantity: String(quantity) }))

export const refOf = (utxo: { txHash: string; outputIndex: number }) => `${utxo.txHash}#${utxo.outputIndex}`
