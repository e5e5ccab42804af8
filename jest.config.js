const { availableParallelism } = require('node:os')
const { testsWithoutTheirPackages } = require('./test/setup/system-packages.js')
const { sqliteRunOnlyPatterns } = require('./test/setup/sqlite-run-only.js')

const onPostgresRun = (process.env.CDS_ENV ?? '').split(',').map(profile => profile.trim()).includes('pg')

/** jest runs TypeScript through ts-jest, compiled to CommonJS (the sources are ESM at runtime). */
module.exports = {
  testEnvironment: 'node',
  globalSetup: './test/setup/global.ts',
  globalTeardown: './test/setup/teardown.ts',
  setupFilesAfterEnv: ['./test/setup/database.ts', './test/setup/compiled-model.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', {
      diagnostics: false,
      tsconfig: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0', isolatedModules: true, allowImportingTsExtensions: true, esModuleInterop: true },
    }],
  },
  moduleNameMapper: { '^#cds-models/(.*)$': '<rootDir>/@cds-models/$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // CI runs the suite twice, on SQLite and on PostgreSQL (CDS_ENV=pg). A file runs in both unless:
  // - it is under test/postgres/ (a PostgreSQL server of its own whatever the profile) or listed in
  //   test/setup/sqlite-run-only.js (no database at all, or a SQLite file of its own whatever the
  //   profile): the SQLite run only, since the PostgreSQL run would repeat the same work;
  // - it is named `*.pg.test.ts` (what only PostgreSQL has, a second client holding its tables,
  //   say): the PostgreSQL run only.
  // A new file runs in both; list it there only if it keeps to that file's rules.
  testPathIgnorePatterns: ['/node_modules/', ...testsWithoutTheirPackages(), ...(onPostgresRun ? ['/test/postgres/', ...sqliteRunOnlyPatterns()] : ['\\.pg\\.test\\.ts$'])],
  // The Cloud Foundry build's output (npm run build:cf) repeats the packages' names.
  modulePathIgnorePatterns: ['<rootDir>/gen/'],
  testTimeout: 60000,
  // Half the cores, two at the least: a file spends part of its time waiting for the processes it
  // starts, so two workers on two cores ran the suite 1.37 times as fast (SQLite 1431 s against 1956 s).
  maxWorkers: Math.max(2, Math.floor(availableParallelism() / 2)),
  // Each file's in-process server leaves about 33 MB and its idle database connections in the
  // process that ran it. Each worker is replaced by a fresh one once the limit is passed, so the
  // suite never runs out of heap or of PostgreSQL's connections.
  workerIdleMemoryLimit: '800MB',
}
