import { GATEWAY_COMMANDS, GATEWAY_USAGE, runCommandLine } from './gateway/cli.ts'
import { VOUCHER_COMMANDS, VOUCHER_USAGE } from './key-lanes/cli.ts'

/**
 * The operator's command line (`npm run gateway -- …`), against the configured database (the SQLite
 * file in development, PostgreSQL with CDS_ENV=pg or in production): the gateway's keys and grants
 * (gateway/cli.ts) and the key lanes' vouchers (key-lanes/cli.ts).
 */
runCommandLine({ ...GATEWAY_COMMANDS, ...VOUCHER_COMMANDS }, `${GATEWAY_USAGE}\n${VOUCHER_USAGE}`)
