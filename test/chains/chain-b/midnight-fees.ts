import { LedgerParameters, Transaction } from '@midnight-ntwrk/ledger-v8'

/**
 * Midnight's ledger pricing a transaction (`node test/chains/chain-b/midnight-fees.ts <transaction hex>`),
 * in a process of its own (the ledger's WebAssembly loads as an ES module, which jest does not):
 * prints, as JSON, Midnight's initial parameters (hex), the transaction's resource cost under them and
 * its fee in specks, both as the ledger computes them.
 */

const parameters = LedgerParameters.initialParameters()
const transaction = Transaction.deserialize('signature', 'proof', 'binding', Buffer.from(process.argv[2], 'hex'))
const cost = transaction.cost(parameters)
process.stdout.write(JSON.stringify({
  parameters: Buffer.from(parameters.serialize()).toString('hex'),
  cost: Object.fromEntries(Object.entries(cost).map(([dimension, value]) => [dimension, Number(value)])),
  fee: String(transaction.fees(parameters)),
}))
