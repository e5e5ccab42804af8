import express, { type Router } from 'express'
import { LedgerRuleError } from '../decode.ts'
import type { Ledger } from '../ledger.ts'
import { toHex } from '../crypto.ts'
import { badRequest, found, hashParameter, HttpError, notFound, paginate, paging } from './http.ts'
import { transactionJson, transactionUtxosJson } from './present.ts'

/** Request bodies above this are refused with 413; anything above max_tx_size fails MaxTxSizeUTxO. */
const SUBMIT_BODY_LIMIT = 65536

/** Well-known metadata labels (CIP-10 registry) that Blockfrost names. */
const CIP10_LABELS: Record<string, string> = {
  '674': 'CIP-0020 - Transaction message/comment metadata',
  '721': 'CIP-0025 - NFT Metadata Standard',
  '1967': 'nut.link metadata oracles registry',
  '1968': 'nut.link metadata oracles data points',
  '61284': 'CIP-0015 - Catalyst registration',
  '61285': 'CIP-0015 - Catalyst witness',
}

/** Transactions, submission and transaction metadata. */
export function transactionRoutes(router: Router, ledger: Ledger) {
  const txParameter = (value: string) => found(ledger.txs.get(hashParameter(value, 'transaction')))

  router.get('/txs/:hash', (req, res) => { res.json(transactionJson(txParameter(req.params.hash))) })
  router.get('/txs/:hash/utxos', (req, res) => { res.json(transactionUtxosJson(ledger, txParameter(req.params.hash))) })
  router.get('/txs/:hash/metadata', (req, res) => {
    res.json(txParameter(req.params.hash).metadata.map(({ label, json }) => ({ label, json_metadata: json })))
  })
  router.get('/txs/:hash/metadata/cbor', (req, res) => {
    res.json(txParameter(req.params.hash).metadata.map(({ label, cborHex }) => ({ label, cbor_metadata: '\\x' + cborHex, metadata: cborHex })))
  })
  router.get('/txs/:hash/cbor', (req, res) => {
    const tx = txParameter(req.params.hash)
    if (!tx.cbor) throw notFound() // the genesis distribution has no transaction body
    res.json({ cbor: toHex(tx.cbor) })
  })

  router.post('/tx/submit', express.raw({ type: () => true, limit: SUBMIT_BODY_LIMIT }), (req, res) => {
    if (!req.is('application/cbor')) throw new HttpError(415, 'Content-Type must be application/cbor.')
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    try {
      res.json(ledger.submit(new Uint8Array(body)))
    } catch (error) {
      if (error instanceof LedgerRuleError) throw badRequest(error.message)
      throw error
    }
  })

  router.get('/metadata/txs/labels', (req, res) => {
    const labels = [...ledger.labels].sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1))
    res.json(paginate(labels, paging(req)).map(([label, txs]) => ({ label, cip10: CIP10_LABELS[label] ?? null, count: String(txs.length) })))
  })
  router.get('/metadata/txs/labels/:label', (req, res) => {
    if (!/^\d{1,20}$/.test(req.params.label)) throw badRequest('Invalid or malformed metadata label.')
    const txs = ledger.labels.get(String(BigInt(req.params.label))) ?? []
    res.json(paginate(txs, paging(req)).map(hash => ({
      tx_hash: hash,
      json_metadata: ledger.txs.get(hash)!.metadata.find(m => m.label === String(BigInt(req.params.label)))!.json,
    })))
  })
}
