import * as gatewayModels from '#cds-models/gateway'

/**
 * The kinds of ledger entries: the generated `LedgerEntryKind`. cds-typer writes a named enum type
 * as `module.exports.X ??= …`, which Node's detection of CommonJS named exports does not see, so
 * `import { LedgerEntryKind }` fails under native ESM (`npm start`, the command line). The module
 * object itself carries it, under native ESM and under jest alike.
 */
type Models = typeof gatewayModels
const models = (gatewayModels as Models & { default?: Models }).default ?? gatewayModels

export const { LedgerEntryKind } = models
