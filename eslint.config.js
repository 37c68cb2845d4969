// ESLint flat config. Besides typescript-eslint's recommended rules it encodes DESIGN.md's three import
// boundaries and forbids import cycles, type-only ones included (scripts/lint/), so that a wrong reach
// fails `npm run lint`, and so `npm test`, instead of waiting for a reviewer. scripts/lint/lint.test.ts
// pins both rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import platform from './scripts/lint/plugin.js';

export default tseslint.config({ ignores: ['node_modules/', 'gen/', 'dist/', '**/*.d.ts'] }, js.configs.recommended, ...tseslint.configs.recommended, {
  files: ['**/*.{ts,js,mjs}'],
  plugins: { platform },
  languageOptions: {
    ecmaVersion: 2023,
    sourceType: 'module',
    globals: {
      console: 'readonly',
      process: 'readonly',
      Buffer: 'readonly',
      URL: 'readonly',
      setTimeout: 'readonly',
      clearTimeout: 'readonly',
      setInterval: 'readonly',
      clearInterval: 'readonly',
      setImmediate: 'readonly',
      AbortController: 'readonly',
      AbortSignal: 'readonly',
      TextEncoder: 'readonly',
      TextDecoder: 'readonly',
      structuredClone: 'readonly',
      performance: 'readonly',
      queueMicrotask: 'readonly',
      fetch: 'readonly',
    },
  },
  rules: {
    'platform/boundaries': 'error',
    'platform/no-cycle': 'error',
    // Control characters in a pattern are deliberate: input checks reject them by name.
    'no-control-regex': 'off',
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
  },
});
