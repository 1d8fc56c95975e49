// Lints the TypeScript source (`npx eslint labextension/src`). Formatting is prettier's job,
// so eslint-config-prettier switches off every rule that would fight it.
import js from '@eslint/js';
import jupyter from '@jupyter/eslint-plugin';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig([
  globalIgnores([
    'lib/',
    'node_modules/',
    'chapyter_ext/labextension/',
    'ui-tests/',
    '**/*.js',
    '**/*.mjs'
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  { plugins: { jupyter } },
  jupyter.configs.recommended,
  // Before our own rules, so that `curly: all` (safe with prettier) stays on.
  prettier,
  {
    files: ['labextension/src/**/*.ts'],
    languageOptions: {
      parserOptions: {
        // Type information for the rules that need it (floating promises, jupyter's
        // command-id-convention); this config also covers the tests, which tsconfig.json
        // leaves out of the build.
        project: './tsconfig.eslint.json',
        tsconfigRootDir: import.meta.dirname
      }
    },
    rules: {
      // JupyterLab's conventions (as in its extension template).
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: { regex: '^I[A-Z]', match: true }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-namespace': 'off',
      curly: ['error', 'all'],
      eqeqeq: ['error', 'smart'],
      'prefer-arrow-callback': 'error',
      // JSON from the server, the kernel and notebook metadata is typed `any` where it
      // enters and checked field by field; JupyterLab's extension template allows it too.
      '@typescript-eslint/no-explicit-any': 'off',
      // The extension is English-only: it takes no ITranslator, so there is no trans.__().
      'jupyter/no-untranslated-string': 'off',
      // The whole extension is one small chunk that the plugins need at activation;
      // splitting it into lazily loaded chunks is a packaging change of its own.
      'jupyter/prefer-lazy-imports': 'off',
      // Bugs worth catching: a promise nobody awaits or marks with `void` loses its errors.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: false }
      ]
    }
  },
  {
    // A test's models live as long as the test; disposing each one would only add noise.
    files: ['labextension/src/__tests__/**/*.ts'],
    rules: { 'jupyter/require-disposable-transfer': 'off' }
  }
]);
