/**
 * Test files that do the same work whatever database profile the run has, so the PostgreSQL run
 * would only repeat the SQLite run's work: they run in the SQLite run only (jest.config.js).
 * Paths are under test/; one ending in / names a whole folder. test/architecture/sqlite-run-only.test.ts
 * checks each entry is there and keeps to its list's rule.
 */

/**
 * Files whose subject involves no database: libraries, the devnets, the zk ceremony, static checks
 * of the sources, the build. Neither they nor the processes they start open the gateway's
 * database. A file that reads or writes the database, the gateway's ledger, or SQL of any kind does
 * not belong here, nor does one that starts the gateway or uses cds.test.
 * To check the list: `CDS_REQUIRES_DB_CREDENTIALS_URL=/nonexistent/db.sqlite npx jest <its files>`
 * passes (any database use would fail on the missing folder).
 */
const DATABASE_FREE = [
  'analytics/settings.test.ts',
  'analytics/statistics.test.ts',
  'analytics/windows.test.ts',
  'architecture/compiled-model.test.ts',
  'architecture/devnet-boundary.test.ts',
  'architecture/gateway-boundary.test.ts',
  'architecture/imports.test.ts',
  'architecture/readme-map.test.ts',
  'architecture/request-parsing.test.ts',
  'architecture/table-names.test.ts',
  'architecture/table-owners.test.ts',
  'chain-a/builders.test.ts',
  'chain-a/cbor.test.ts',
  'chain-a/config.test.ts',
  'chain-a/csl.test.ts',
  'chain-a/devnet-lists.test.ts',
  'chain-a/errors.test.ts',
  'chain-a/koios.test.ts',
  'chain-a/ogmios.test.ts',
  'chain-a/ogmios-index.test.ts',
  'chain-a/ogmios-ledger.test.ts',
  'chain-a/ogmios-rpc.test.ts',
  'chain-a/lists.test.ts',
  'chain-a/mapping.test.ts',
  'chain-a/paging.test.ts',
  'chain-a/signing/',
  'chain-a/variants.test.ts',
  'chains/chain-b/config.test.ts',
  'chains/chain-b/content-root.test.ts',
  'chains/chain-b/indexer.test.ts',
  'chains/chain-b/ledger.test.ts',
  'chains/chain-b/prover.test.ts',
  'chains/chain-b/vault.test.ts',
  'chains/chain-b/vault-codec.test.ts',
  'chains/chain-b/midnight-provider.test.ts',
  'chains/chain-b/public-shapes.test.ts',
  'chains/chain-b/unshielded-address.test.ts',
  'devnet/',
  'fuzz/harness.test.ts',
  'gateway/lane-secret.test.ts',
  'gateway/lease-settings.test.ts',
  'gateway/paths.test.ts',
  'gateway/remote-settings.test.ts',
  'gateway/voucher-codes.test.ts',
  'lib/app-files.test.ts',
  'lib/client-address.test.ts',
  'lib/error-codes.test.ts',
  'lib/graceful-stop.test.ts',
  'lib/host-capacity.test.ts',
  'lib/lease.test.ts',
  'lib/model-cache.test.ts',
  'lib/query-budget.test.ts',
  'lib/settle-all.test.ts',
  'lib/shadowing-properties.test.ts',
  'lib/system-packages.test.ts',
  'lib/typer.test.ts',
  'metrics/collectors.test.ts',
  'metrics/prover.test.ts',
  'production/build.test.ts',
  'production/zk-keys-build.test.ts',
  'zk/',
]

/**
 * Files that choose their database themselves: every process they start runs on a SQLite file of
 * its own whatever the run's profile (CDS_ENV removed or set to another profile, the PostgreSQL
 * run's database setting removed), and nothing runs in the test process itself (no cds.test).
 * Like test/postgres/, which uses a PostgreSQL server of its own, they run once.
 */
const OWN_DATABASE = [
  'browser/',
  'e2e/hosted.test.ts',
  'e2e/keeps-serving.test.ts',
  'e2e/quickstart-remote.test.ts',
  'e2e/quickstart.test.ts',
  'e2e/remote-plugin-hostile.test.ts',
  'e2e/restart.test.ts',
  'e2e/start.test.ts',
  'gateway/cli.test.ts',
  'gateway/vouchers-cli.test.ts',
  'koios/e2e-quickstart.test.ts',
  'ogmios/e2e-quickstart.test.ts',
  'lib/production-start.test.ts',
  'network/ipv6-clients.test.ts',
]

const escaped = text => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Both lists as jest path patterns. */
const sqliteRunOnlyPatterns = () => [...DATABASE_FREE, ...OWN_DATABASE].map(path => `/test/${escaped(path)}${path.endsWith('/') ? '' : '$'}`)

module.exports = { DATABASE_FREE, OWN_DATABASE, sqliteRunOnlyPatterns }
