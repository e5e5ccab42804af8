import { GATEWAY_COMMANDS, GATEWAY_USAGE, runCommandLine } from './gateway/cli.ts'
import { OPERATOR_COMMANDS, OPERATOR_USAGE } from './operator/cli.ts'

/**
 * The operator's command line (`npm run gateway -- …`), against the configured database (the SQLite
 * file in development, PostgreSQL with CDS_ENV=pg or in production): the operator's keys, vouchers
 * and audit (operator/cli.ts) and the gateway's grants (gateway/cli.ts).
 */
runCommandLine({ ...OPERATOR_COMMANDS, ...GATEWAY_COMMANDS }, `${OPERATOR_USAGE}\n${GATEWAY_USAGE}`)
