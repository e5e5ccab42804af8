import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet } from '../../../devnet/chain-a/index.ts'
import type { Output } from '../../../devnet/chain-a/types.ts'
import { ADA, buildTx, largestUtxo, type TxSpec } from '../../support/devnet.ts'

/** Unsigned devnet transactions, and what external signers would answer for them. */

/** Comfortably above the minimum fee of these small transactions with a few witnesses. */
export const FEE = 400_000n

export interface Unsigned {
  hex: string
  bodyHash: string
  inputs: Output[]
  /** Input references → owner addresses, as the signing service resolves them. */
  owners: Record<string, string>
}

/** An unsigned transaction from `from` (its largest output) paying `coin` to `to`, change back to `from`. */
export function unsignedTransfer(devnet: ChainADevnet, from: string, to: string, coin = 5n * ADA, extra: Partial<TxSpec> = {}): Unsigned {
  const inputs = [largestUtxo(devnet, from)]
  const hex = Buffer.from(buildTx({ inputs, outputs: [{ address: to, coin }], fee: FEE, ...extra, signers: [] })).toString('hex')
  return { hex, bodyHash: bodyHash(hex), inputs, owners: Object.fromEntries(inputs.map(input => [input.ref, input.address])) }
}

export const bodyHash = (txHex: string) => CSL.FixedTransaction.from_hex(txHex).transaction_hash().to_hex()

export const keyHashOf = (key: CSL.PrivateKey) => key.to_public().hash().to_hex()

export const submitHex = (devnet: ChainADevnet, hex: string) => devnet.submit(Buffer.from(hex, 'hex'))

/** Runs `f` and answers the ApiError code it throws (fails when it does not throw). */
export async function errorCode(f: () => unknown): Promise<string> {
  try {
    await f()
  } catch (error) {
    return (error as { code?: string }).code ?? String(error)
  }
  throw new Error('expected an error')
}
