import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['node_modules/**', 'data/**', 'coverage/**', 'web/dist/**', 'dist/**', 'sdk/src/openapi.ts'] },
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Fastify hooks and handlers are async by contract even when they need no await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests may assert presence with `!` after checking it.
    files: ['test/**/*.ts', '**/*.test.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Pure domain rules stay free of I/O: no database, HTTP, clock or process access.
    files: ['src/modules/*/rules/**/*.ts', 'src/platform/geo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'kysely',
                'pg',
                '@electric-sql/*',
                'fastify',
                'node:fs*',
                'node:http*',
                'node:net',
                'stripe',
                'nodemailer',
                'pg-boss',
              ],
              message: 'pure rules do no I/O',
            },
          ],
        },
      ],
    },
  },
  {
    // Other modules are reached only through their index.ts.
    files: ['src/modules/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./\\.\\./modules/[^/]+/(?!index\\.ts$)',
              message: 'import another module through its index.ts',
            },
            {
              regex: '^\\.\\./(?!\\.)[a-z-]+/(?!index\\.ts$).+',
              message: 'import a sibling module through its index.ts',
            },
          ],
        },
      ],
    },
  },
);
