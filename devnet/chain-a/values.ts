import { assetList, type Value } from '../../srv/chains/chain-a/value.ts'

/** Values as the devnet's API shows them; the arithmetic is chain A's (`../value.ts`). */

export { addValue, sumValues, zeroValue, type Value } from '../../srv/chains/chain-a/value.ts'

/** Blockfrost's amount list: lovelace first, then assets, quantities as strings. */
interface Amount {
  unit: string
  quantity: string
}

export const toAmounts = (value: Value): Amount[] => [{ unit: 'lovelace', quantity: String(value.coin) }, ...assetList(value.assets)]
