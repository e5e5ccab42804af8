/** jest runs TypeScript through ts-jest, compiled to CommonJS (the sources are ESM at runtime). */
const onPostgres = (process.env.CDS_ENV ?? '').split(',').includes('pg')

module.exports = {
  testEnvironment: 'node',
  globalSetup: './test/setup/global.ts',
  transform: {
    '^.+\\.ts$': ['ts-jest', {
      diagnostics: false,
      tsconfig: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0', isolatedModules: true, allowImportingTsExtensions: true, esModuleInterop: true },
    }],
  },
  moduleNameMapper: { '^#cds-models/(.*)$': '<rootDir>/@cds-models/$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 60000,
  // One shared PostgreSQL database: suites run one after another there.
  maxWorkers: onPostgres ? 1 : '50%',
}
