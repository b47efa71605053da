// ESLint flat config: typescript-eslint's type-checked recommended rules over the TypeScript
// sources (src/, test/, tools/), and ESLint's recommended rules over bin/*.js as plain JavaScript.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['node_modules/', 'dist/', 'data/', '.test-sources-*/'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'tools/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // node:test's describe/it return a promise the runner itself awaits; leaving it unawaited
      // is how the runner is meant to be used, so it is no floating promise.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'suite', 'test'] },
          ],
        },
      ],
    },
  },
  {
    files: ['bin/**/*.js', 'build/**/*.mjs', 'eslint.config.js'],
    extends: [js.configs.recommended],
    // bin/cmi.js and build/ use no Node global beyond the module scope; name any they come to need here.
    languageOptions: { sourceType: 'module' },
  },
);
