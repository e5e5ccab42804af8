import { TransactionBuild, TransactionSubmission } from '#cds-models/chainatx'

/**
 * The states of builds and submissions, as the model (db/chain-a-tx.cds) declares them. They are the
 * generated enums of the elements: cds-typer's enums of named types cannot be imported at run time
 * under Node's native ESM (their exports are not detected), so a named type (BuildKind) is used as a
 * type only, its values written as literals it checks.
 */

export const BuildStatus = TransactionBuild.status
export type BuildStatus = NonNullable<TransactionBuild['status']>

export type { BuildKind } from '#cds-models/chainatx'

export const SubmissionStatus = TransactionSubmission.status
export type SubmissionStatus = NonNullable<TransactionSubmission['status']>
