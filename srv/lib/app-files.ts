import cds from '@sap/cds'
import { resolve } from 'node:path'

/**
 * The extension of the app's own modules: '.ts' where the sources run as they are, '.js' in the
 * built application (gen/srv), which ships them compiled to CommonJS. Only there is this module
 * CommonJS with a file name ending in '.js' (run natively it is an ES module, without __filename).
 */
const MODULE = typeof __filename === 'string' && __filename.endsWith('.js') ? '.js' : '.ts'

/**
 * The files the running server reads from its own installation, by path from the project root:
 * the one place that names them (test/lib/app-files.test.ts checks that each exists).
 */
export const APP_FILES = {
  /** The portal's web app (app/portal). */
  portal: 'app/portal/webapp',
  /** The operator console's web app (app/console). */
  console: 'app/console/webapp',
  /** The worker thread that compiles a UI5 theme from LESS. */
  themeWorker: `srv/front-ends/theme-worker${MODULE}`,
  /** The worker thread that proves a claim. */
  proverWorker: `srv/chains/chain-b/zk/prover-worker${MODULE}`,
  /** The worker thread that encodes and decodes the vault's state in Midnight's ledger form. */
  vaultCodecWorker: `srv/chains/chain-b/vault-codec-worker${MODULE}`,
  /** The subset of the chain-B indexer's GraphQL schema the adapter's queries are checked against. */
  indexerSchema: 'srv/chains/chain-b/indexer-schema.graphql',
  /** The circuits' keys, unless `cds.requires['chain-b'].zk.keys` names others. */
  zkKeys: 'zk/keys',
} as const

/** The absolute path of one of the app's own files. */
export const appFile = (name: keyof typeof APP_FILES) => resolve(cds.root, APP_FILES[name])

/**
 * What a build step makes and the running server reads when it is there (it does without in a
 * checkout that has not run the step): a deployed artefact must contain these.
 */
export const BUILT_FILES = {
  /** The MCP tool servers' package, `chain-access-mcp-<version>.tgz` (npm run build:mcp), which /mcp serves. */
  mcpPackage: 'gen/mcp',
} as const

/** The absolute path of one of the app's built files. */
export const builtFile = (name: keyof typeof BUILT_FILES) => resolve(cds.root, BUILT_FILES[name])
