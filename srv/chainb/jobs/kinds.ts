import * as chainbModels from '#cds-models/chainb'

/**
 * The generated job kinds (`JobKind`), read from the module object: cds-typer writes a named enum
 * type as `module.exports.X ??= …`, which Node's detection of CommonJS named exports does not see
 * (see srv/gateway/ledger-kinds.ts).
 */
type Models = typeof chainbModels
const models = (chainbModels as Models & { default?: Models }).default ?? chainbModels

export const { JobKind, DocumentKind } = models
export type JobKindName = (typeof JobKind)[keyof typeof JobKind]
