import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** A module's insides are its own: another module imports only its index.ts (or its rules/index.ts). */
const MODULE_BOUNDARIES = [
  {
    regex: '^\\.\\./\\.\\./modules/[^/]+/(?!index\\.ts$|rules/index\\.ts$)',
    message: 'import another module through its index.ts',
  },
  {
    regex: '^\\.\\./(?!\\.)[a-z-]+/(?!index\\.ts$|rules/index\\.ts$).+',
    message: 'import a sibling module through its index.ts',
  },
];

/** What a pure rule may not import: I/O, the clock, and anything of a module but its pure rules. */
const PURE_RULES = [
  {
    group: [
      'kysely',
      'pg',
      '@electric-sql/*',
      'fastify',
      'fastify-*',
      '@fastify/*',
      'node:fs*',
      'node:http*',
      'node:net',
      'node:dns*',
      'node:child_process',
      'node:worker_threads',
      'stripe',
      'nodemailer',
      'mqtt',
      'pg-boss',
      'pino',
    ],
    message: 'pure rules do no I/O',
  },
  {
    // From src/modules/<m>/rules/: another module's barrel, or this module's services and repositories.
    regex: '^\\.\\./\\.\\./[a-z-]+/index\\.ts$',
    message: "import another module's pure rules through its rules/index.ts, not its barrel",
  },
  {
    regex: '^\\.\\./(?!\\.)[^/]+$',
    message: "a rule uses only rules: move the pure part of this file into the module's rules/",
  },
  {
    // Only platform's pure parts: money, the London calendar, working days, geometry, postcodes and CSV.
    regex:
      '^(\\.\\./)+platform/(?!money\\.ts$|london-calendar\\.ts$|working-days\\.ts$|postcodes\\.ts$|csv\\.ts$|geo/)',
    message:
      'pure rules use only the pure parts of platform (money, london-calendar, working-days, postcodes, csv, geo)',
  },
];

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
    // Other modules are reached only through their index.ts.
    files: ['src/modules/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: MODULE_BOUNDARIES }] },
  },
  {
    // Pure domain rules: no I/O, no clock, no process, and other modules only through their pure
    // `rules/index.ts` (a module's barrel loads its services and routes). This block comes after the
    // one above and repeats its patterns, because a later block's options for a rule replace an
    // earlier block's for the same file.
    files: ['src/modules/*/rules/**/*.ts', 'src/platform/geo/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [...MODULE_BOUNDARIES, ...PURE_RULES] }],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'pure rules take what they need as arguments' },
        { name: 'fetch', message: 'pure rules do no I/O' },
        { name: 'setTimeout', message: 'pure rules do not wait' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'pure rules never read the clock: take the time as an argument',
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'pure rules never read the clock: take the time as an argument',
        },
      ],
    },
  },
  {
    // Nothing too big to hold in one's head. Schemas (declarations), migrations and tests are exempt.
    files: ['src/**/*.ts', 'web/**/*.ts', 'web/**/*.tsx'],
    ignores: ['**/*.test.ts', 'src/migrations/**', '**/*-schemas.ts'],
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
);
