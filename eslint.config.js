// ESLint for the connector's own code (src, test, bench, scripts). The exported platform apps
// under src/export/*/template/ are projects of their own, linted by their platforms' tools in their
// own tests (n8n-node lint, Pipedream's ESLint plugin, zapier-platform validate, tsc --strict).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', 'src/export/*/template/**', 'console/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
      // Prettier owns the layout and breaks `request(app)[method](…)` chains before the `[`.
      'no-unexpected-multiline': 'off',
    },
  },
  // Jest loads its resolver and runtime (scripts/jest-*.cjs) with require(): CommonJS.
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
