import { badInput } from '../../../lib/errors.ts'
import { buildTransaction } from './build.ts'
import { cslAssembler } from './csl.ts'
import type { BuilderName, TransactionBuilder } from './types.ts'

/**
 * Transaction builders for chain A: from what a service knows (the sender's UTxOs, the protocol
 * parameters, the current slot) and what the caller asks for (payments, mints and burns, metadata,
 * spends of script-locked outputs), an unsigned Conway-era transaction and everything a build record
 * needs. Two backends assemble the transaction, one with CSL and one with buildooor; selection,
 * balancing, fees, collateral and script evaluation are shared (`build.ts`), so both answer the same
 * request with the same inputs and outputs.
 *
 * Errors are ApiErrors with stable codes: INSUFFICIENT_FUNDS, OUTPUT_BELOW_MIN_ADA, INVALID_METADATA,
 * INVALID_NATIVE_SCRIPT, INVALID_PLUTUS_DATA, INVALID_SCRIPT, SCRIPT_FAILED, NO_COLLATERAL,
 * UNKNOWN_BUILDER, and for malformed parameters INVALID_ADDRESS, WRONG_NETWORK, INVALID_VALUE,
 * INVALID_ASSET_UNIT, INVALID_VALIDITY_INTERVAL (all 400).
 */

export type {
  BuilderName, BuildRequest, BuildResult, MintRequest, OutputRef, PaymentRequest, ScriptSpendRequest,
} from './types.ts'

const BUILDER_NAMES: readonly BuilderName[] = ['csl', 'buildooor']

// buildooor is loaded on its first build: its libraries take half a second to load, which every start would pay.
const ASSEMBLERS = {
  csl: async () => cslAssembler,
  buildooor: async () => (await import('./buildooor.ts')).buildooorAssembler,
}

export function builderFor(name: string): TransactionBuilder {
  if (!BUILDER_NAMES.includes(name as BuilderName)) {
    throw badInput('UNKNOWN_BUILDER', `Unknown transaction builder '${name}'; available: ${BUILDER_NAMES.join(', ')}`, 'builder')
  }
  const assembler = ASSEMBLERS[name as BuilderName]
  return { name: name as BuilderName, build: async request => buildTransaction(await assembler(), request) }
}
