import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'

/** A multi-asset value: lovelace plus native assets keyed by unit (policy id hex + asset name hex). */
export interface Value {
  coin: bigint
  assets: Map<string, bigint>
}

/** Blockfrost's amount list: lovelace first, then assets, quantities as strings. */
export interface Amount {
  unit: string
  quantity: string
}

export const zeroValue = (): Value => ({ coin: 0n, assets: new Map() })

export const lovelace = (coin: bigint): Value => ({ coin, assets: new Map() })

export function addValue(target: Value, value: Value, sign: 1n | -1n = 1n): Value {
  target.coin += sign * value.coin
  for (const [unit, quantity] of value.assets) {
    const total = (target.assets.get(unit) ?? 0n) + sign * quantity
    if (total === 0n) target.assets.delete(unit)
    else target.assets.set(unit, total)
  }
  return target
}

export const sumValues = (values: Value[]) => values.reduce((sum, value) => addValue(sum, value), zeroValue())

export const valuesEqual = (a: Value, b: Value) =>
  a.coin === b.coin && a.assets.size === b.assets.size && [...a.assets].every(([unit, q]) => b.assets.get(unit) === q)

export function describeValue(value: Value): string {
  const assets = [...value.assets].map(([unit, quantity]) => ` + ${quantity} ${unit}`).join('')
  return `${value.coin} lovelace${assets}`
}

export function toAmounts(value: Value): Amount[] {
  const assets = [...value.assets].sort(([a], [b]) => a.localeCompare(b))
  return [{ unit: 'lovelace', quantity: String(value.coin) }, ...assets.map(([unit, quantity]) => ({ unit, quantity: String(quantity) }))]
}

export const assetNameHex = (name: CSL.AssetName) => Buffer.from(name.name()).toString('hex')

export function fromCslMultiAsset(multiasset: CSL.MultiAsset | undefined, into = new Map<string, bigint>()): Map<string, bigint> {
  if (!multiasset) return into
  const policies = multiasset.keys()
  for (let i = 0; i < policies.len(); i++) {
    const policy = policies.get(i)
    const assets = multiasset.get(policy)!
    const names = assets.keys()
    for (let j = 0; j < names.len(); j++) {
      const name = names.get(j)
      const unit = policy.to_hex() + assetNameHex(name)
      into.set(unit, (into.get(unit) ?? 0n) + BigInt(assets.get(name)!.to_str()))
    }
  }
  return into
}

export const fromCslValue = (value: CSL.Value): Value => ({ coin: BigInt(value.coin().to_str()), assets: fromCslMultiAsset(value.multiasset()) })

export function toCslValue(value: Value): CSL.Value {
  const result = CSL.Value.new(CSL.BigNum.from_str(String(value.coin)))
  if (value.assets.size === 0) return result
  const multiasset = CSL.MultiAsset.new()
  for (const [unit, quantity] of value.assets) {
    multiasset.set_asset(
      CSL.ScriptHash.from_hex(unit.slice(0, 56)),
      CSL.AssetName.new(Buffer.from(unit.slice(56), 'hex')),
      CSL.BigNum.from_str(String(quantity)),
    )
  }
  result.set_multiasset(multiasset)
  return result
}
