import type { AssetQuantity, ChainUtxo } from './port.ts'

/** Lovelace plus native assets by unit (policy id hex + asset name hex); quantities may be negative in sums. */
export interface Value {
  coin: bigint
  assets: Map<string, bigint>
}

export const lovelace = (coin: bigint): Value => ({ coin, assets: new Map() })

export const zeroValue = (): Value => lovelace(0n)

/** Adds `value` (or subtracts it, sign −1) to `target` in place; assets that come to zero are dropped. */
export function addValue(target: Value, value: Value, sign: 1n | -1n = 1n): Value {
  target.coin += sign * value.coin
  for (const [unit, quantity] of value.assets) {
    const total = (target.assets.get(unit) ?? 0n) + sign * quantity
    if (total === 0n) target.assets.delete(unit)
    else target.assets.set(unit, total)
  }
  return target
}

export const sumValues = (values: Value[]): Value => values.reduce((sum, value) => addValue(sum, value), zeroValue())

export const subtractValues = (a: Value, b: Value): Value => addValue(sumValues([a]), b, -1n)

/** The part of a value that is positive (what still has to be found), per component. */
export function positivePart(value: Value): Value {
  return { coin: value.coin > 0n ? value.coin : 0n, assets: new Map([...value.assets].filter(([, q]) => q > 0n)) }
}

export const valuesEqual = (a: Value, b: Value) =>
  a.coin === b.coin && a.assets.size === b.assets.size && [...a.assets].every(([unit, q]) => b.assets.get(unit) === q)

export function describeValue(value: Value): string {
  const assets = [...value.assets].map(([unit, quantity]) => ` + ${quantity} ${unit}`).join('')
  return `${value.coin} lovelace${assets}`
}

export const valueOfUtxo = (utxo: ChainUtxo): Value => ({ coin: BigInt(utxo.lovelace), assets: new Map(utxo.assets.map(a => [a.unit, BigInt(a.quantity)])) })

/** Assets as the chain port lists them: by unit, quantities as integer strings. */
export const assetList = (assets: Map<string, bigint>): AssetQuantity[] =>
  [...assets].sort(([a], [b]) => a.localeCompare(b)).map(([unit, quantity]) => ({ unit, quantity: String(quantity) }))
