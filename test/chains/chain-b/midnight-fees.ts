import { readFileSync } from 'node:fs'
import { LedgerParameters, LedgerState, Transaction } from '@midnight-ntwrk/ledger-v8'
import { midnightParametersOf } from '../../../srv/chains/chain-b/midnight-parameters.ts'

/**
 * Midnight's ledger pricing a transaction, in a process of its own (the ledger's WebAssembly loads as
 * an ES module, which jest does not):
 *   node test/chains/chain-b/midnight-fees.ts <transaction: hex, or a file of its bytes> [<ledger state file>]
 * The parameters are Midnight's initial ones, or those of the given serialized ledger state (a node's).
 * Prints, as JSON, the parameters (hex, and what the devnet's fee formula reads from them), the
 * transaction's resource cost under them and its fee in specks, both as the ledger computes them.
 */

const [transactionArgument, statePath] = process.argv.slice(2)
const bytesOf = (argument: string) => /^[0-9a-f]+$/i.test(argument) ? Buffer.from(argument, 'hex') : readFileSync(argument)
const parameters = statePath ? LedgerState.deserialize(readFileSync(statePath)).parameters : LedgerParameters.initialParameters()
const transaction = Transaction.deserialize('signature', 'proof', 'binding', bytesOf(transactionArgument))
const cost = transaction.cost(parameters)
process.stdout.write(JSON.stringify({
  parameters: Buffer.from(parameters.serialize()).toString('hex'),
  midnightParameters: midnightParametersOf(parameters),
  cost: Object.fromEntries(Object.entries(cost).map(([dimension, value]) => [dimension, Number(value)])),
  fee: String(transaction.fees(parameters)),
}))
