const { testsWithoutTheirPackages } = require('./test/setup/system-packages.js')

/** jest runs TypeScript through ts-jest, compiled to CommonJS (the sources are ESM at runtime). */
module.exports = {
  testEnvironment: 'node',
  globalSetup: './test/setup/global.ts',
  globalTeardown: './test/setup/teardown.ts',
  setupFilesAfterEnv: ['./test/setup/database.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', {
      diagnostics: false,
      tsconfig: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0', isolatedModules: true, allowImportingTsExtensions: true, esModuleInterop: true },
    }],
  },
  moduleNameMapper: { '^#cds-models/(.*)$': '<rootDir>/@cds-models/$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...testsWithoutTheirPackages()],
  // The Cloud Foundry build's output (npm run build:cf) repeats the packages' names.
  modulePathIgnorePatterns: ['<rootDir>/gen/'],
  testTimeout: 60000,
  maxWorkers: '50%',
}
