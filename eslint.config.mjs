// ESLint flat config for the TypeScript layer, its tests, the benchmark and the scripts.
// `npm run lint` runs it together with `tsc --noEmit` (noUncheckedIndexedAccess), cargo fmt and clippy.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: ['lib/**', 'target/**', 'node_modules/**', '.tools/**', 'npm/**', 'index.d.ts', '**/*.d.mts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // Tests load modules inside jest.isolateModules() and the addon itself with require().
    files: ['__test__/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The optional SDK peer: these imports fail only when it is absent, so @ts-expect-error would
    // itself be an error when it is installed.
    files: ['ts/sdk-types.d.ts'],
    rules: { '@typescript-eslint/ban-ts-comment': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
);
