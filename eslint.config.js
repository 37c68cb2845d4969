// ESLint flat config. Besides typescript-eslint's recommended rules it encodes the import boundaries
// (DESIGN.md's three, core/ never importing cloud/, web pages), and forbids import cycles between files and
// between folders, type-only ones included (scripts/lint/), so that a wrong reach fails `npm run lint`, and
// so `npm test`, instead of waiting for a reviewer. scripts/lint/lint.test.ts pins every rule. The web
// pages' .tsx files are linted like the rest.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import platform from './scripts/lint/plugin.js';

export default tseslint.config({ ignores: ['node_modules/', 'gen/', 'dist/', '**/*.d.ts'] }, js.configs.recommended, ...tseslint.configs.recommended, {
  files: ['**/*.{ts,tsx,js,mjs}'],
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
    'platform/no-folder-cycle': 'error',
    // Control characters in a pattern are deliberate: input checks reject them by name.
    'no-control-regex': 'off',
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
  },
});
