import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['.tmp*/', 'node_modules/', '@cds-models/', 'gen/', 'data/', '.ci/out/', 'app/**/resources/', 'zk/build/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly', Buffer: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', fetch: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', structuredClone: 'readonly', queueMicrotask: 'readonly', setImmediate: 'readonly', performance: 'readonly', globalThis: 'readonly' } },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/semi': ['error', 'never'],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/indent': ['error', 2, { SwitchCase: 1, ignoredNodes: ['TemplateLiteral *'] }],
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/eol-last': 'error',
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' }],
    },
  },
  // Framework internals (CQN, request objects) are loosely typed; rows and states use the generated types.
  { files: ['srv/**', 'devnet/**'], rules: { '@typescript-eslint/no-explicit-any': 'warn' } },
  // Tests and benchmarks may poke at untyped framework internals and raw response bodies.
  { files: ['test/**', 'bench/**', '*.js', 'db/*.js', 'mcp/bin/*.cjs', 'plugins/*/cds-plugin.js'], rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-require-imports': 'off' } },
  // The portal runs in the browser as UI5 modules (sap.ui.define), written in UI5's own style.
  {
    files: ['app/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { sap: 'readonly', window: 'readonly', document: 'readonly', navigator: 'readonly', XMLHttpRequest: 'readonly', btoa: 'readonly', atob: 'readonly', Uint8Array: 'readonly', Promise: 'readonly' },
    },
    rules: {
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/quotes': ['error', 'double', { avoidEscape: true }],
      '@stylistic/comma-dangle': ['error', 'never'],
      '@typescript-eslint/no-this-alias': 'off',
      'no-var': 'off',
      'strict': ['error', 'function'],
    },
  },
)
