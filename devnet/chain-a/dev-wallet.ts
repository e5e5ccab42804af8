import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readJsonBody } from '../../srv/lib/json-body.ts'
import { sendError } from '../../srv/lib/http-safety.ts'
import { ApiError, isApiError } from '../../srv/lib/errors.ts'
import { cslAddress, toCslValue, transactionInput } from '../../srv/chains/chain-a/csl.ts'
import type { Value } from '../../srv/chains/chain-a/value.ts'
import { signDataWithWallet, signWithWallet, SignerInputError } from './dev-signer.ts'
import type { ChainADevnet } from './index.ts'

/**
 * The development wallet's server side, at /dev-wallet, mounted only where the chain-A devnet is
 * embedded (development and tests, never production): what a CIP-30 wallet does with its keys, done
 * with the devnet test wallets' keys (which are public), so the portal can be clicked through
 * without a browser extension. The portal's wallet/devWallet.js puts one CIP-30 wallet per test
 * wallet in `window.cardano`. It signs devnet transactions and addresses only (the dev signer
 * refuses mainnet), and never spends for anyone but the person clicking.
 *
 *   GET  /dev-wallet                 the wallets: name, address and stake address (bech32 and hex)
 *   GET  /dev-wallet/utxos?wallet=n  getUtxos: TransactionUnspentOutput CBOR hex, and getBalance: Value CBOR hex
 *   POST /dev-wallet/sign-tx         { wallet, tx }                signTx(tx, true): { witnessSet }
 *   POST /dev-wallet/sign-data       { wallet, address, payload }  signData: { signature, key }
 *   POST /dev-wallet/submit-tx       { tx }                        submitTx: { txHash }
 */

type Next = (error?: unknown) => void
const BODY_LIMIT = 64 * 1024
const MAX_UTXO_PAGES = 10

interface Utxo { tx_hash: string; output_index: number; amount: { unit: string; quantity: string }[] }

export function devWalletRoutes(devnet: ChainADevnet) {
  const walletNamed = (value: unknown) => {
    const index = Number(value)
    const wallet = Number.isInteger(index) && index >= 1 ? devnet.wallets()[index - 1] : undefined
    if (!wallet) throw new SignerInputError(`wallet must be a test wallet's number, 1 to ${devnet.wallets().length}`)
    return { index, ...wallet, keys: { name: wallet.name, ...devnet.walletKeys(wallet.name) } }
  }

  const routes: Record<string, (body: Record<string, unknown>, query: URLSearchParams) => Promise<unknown> | unknown> = {
    'GET /': () => ({
      network: 'devnet',
      networkId: 0,
      wallets: devnet.wallets().map((wallet, i) => ({
        wallet: i + 1,
        name: `Devnet wallet ${i + 1}`,
        address: wallet.address,
        addressHex: cslAddress(wallet.address).to_hex(),
        stakeAddress: wallet.stakeAddress,
        stakeAddressHex: cslAddress(wallet.stakeAddress).to_hex(),
      })),
    }),
    'GET /utxos': async (_body, query) => {
      const wallet = walletNamed(query.get('wallet'))
      const utxos = await utxosOf(devnet.url, wallet.address)
      const total: Value = { coin: 0n, assets: new Map() }
      const outputs = utxos.map(utxo => {
        const value = valueOf(utxo.amount)
        total.coin += value.coin
        for (const [unit, quantity] of value.assets) total.assets.set(unit, (total.assets.get(unit) ?? 0n) + quantity)
        const output = CSL.TransactionOutput.new(cslAddress(wallet.address), toCslValue(value))
        return CSL.TransactionUnspentOutput.new(transactionInput({ txHash: utxo.tx_hash, outputIndex: utxo.output_index }), output).to_hex()
      })
      return { utxos: outputs, balance: toCslValue(total).to_hex(), lovelace: total.coin.toString() }
    },
    'POST /sign-tx': async body => {
      const wallet = walletNamed(body.wallet)
      if (typeof body.tx !== 'string') throw new SignerInputError('tx must be the transaction\'s CBOR in hex')
      return { witnessSet: (await signWithWallet(body.tx, wallet.keys)).witnessSetCbor }
    },
    'POST /sign-data': body => {
      const wallet = walletNamed(body.wallet)
      if (typeof body.address !== 'string' || typeof body.payload !== 'string') throw new SignerInputError('address and payload (hex) are required')
      return signDataWithWallet(body.address, body.payload, wallet.keys)
    },
    'POST /submit-tx': body => {
      if (typeof body.tx !== 'string' || !/^[0-9a-fA-F]+$/.test(body.tx)) throw new SignerInputError('tx must be the signed transaction\'s CBOR in hex')
      return { txHash: devnet.submit(Buffer.from(body.tx, 'hex')) }
    },
  }

  return function devWallet(req: IncomingMessage, res: ServerResponse, next: Next) {
    const [path, search] = (req.url ?? '/').split('?')
    const route = routes[`${req.method === 'HEAD' ? 'GET' : req.method} ${path}`]
    if (!route) return next()
    answer(req, res, () => readBody(req).then(body => route(body, new URLSearchParams(search ?? ''))))
  }
}

async function answer(_req: IncomingMessage, res: ServerResponse, work: () => Promise<unknown>) {
  try {
    const body = await work()
    res.setHeader('content-type', 'application/json')
    res.setHeader('cache-control', 'no-store')
    res.end(JSON.stringify(body))
  } catch (error) {
    if (isApiError(error)) return sendError(res, error.status, error.code, error.message)
    // A refusal of the signer or of the devnet's ledger (CIP-30: a sign or send error) is the caller's.
    // The signer speaks to the command line (`--tx`); here the same values are body fields.
    const message = String((error as Error)?.message ?? error).replace(/--(tx|address|payload)\b/g, '$1').slice(0, 500)
    sendError(res, 400, error instanceof SignerInputError ? 'DEV_WALLET_REFUSED' : 'DEV_WALLET_TX_REJECTED', message)
  }
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (req.method !== 'POST') return {}
  const body = await readJsonBody(req, BODY_LIMIT)
  if (!body.ok) throw new ApiError(body.status, body.code, body.message)
  if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) throw new ApiError(400, 'INVALID_BODY', 'The body must be a JSON object')
  return body.value as Record<string, unknown>
}

async function utxosOf(devnetUrl: string, address: string): Promise<Utxo[]> {
  const all: Utxo[] = []
  for (let page = 1; page <= MAX_UTXO_PAGES; page++) {
    const response = await fetch(`${devnetUrl}/addresses/${address}/utxos?page=${page}`)
    if (response.status === 404) return all
    if (!response.ok) throw new Error(`the devnet answered ${response.status} for the wallet's UTxOs`)
    const utxos = await response.json() as Utxo[]
    all.push(...utxos)
    if (utxos.length < 100) return all
  }
  return all
}

function valueOf(amount: Utxo['amount']): Value {
  const value: Value = { coin: 0n, assets: new Map() }
  for (const { unit, quantity } of amount) {
    if (unit === 'lovelace') value.coin += BigInt(quantity)
    else value.assets.set(unit, (value.assets.get(unit) ?? 0n) + BigInt(quantity))
  }
  return value
}
