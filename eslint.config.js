/**
 * `npm run lint` (and `npm test`, next to `tsc --noEmit`): import cycles and the layer rules of
 * docs/architecture.md ("The layers"). Only what the code already keeps is enforced; style is left to review.
 */
const tseslint = require('typescript-eslint');
const importPlugin = require('eslint-plugin-import');

/** Imports that do I/O (network, disk, processes, database, Temporal, HTTP server, logging). */
const IO_MODULES = [
  'mongoose', 'koa', '@koa/*', 'pino', 'ethers', '@temporalio/*',
  'node:fs', 'node:fs/*', 'node:net', 'node:http', 'node:https', 'node:http2', 'node:dns', 'node:dns/*', 'node:child_process', 'node:worker_threads',
  'fs', 'fs/*', 'net', 'http', 'https', 'http2', 'dns', 'dns/*', 'child_process',
];
/** The I/O layers of this code base, as import paths (chains/scan holds pure scan rules). */
const IO_LAYERS_REGEX = '(^|/)(models|services|startup|db|activities|workflows|api|metrics|config|temporal|cli)(/|$)|(^|/)chains(/(?!scan$)|$)';

const restricted = (...patterns) => ['error', { patterns }];

/** src/services/<domain>: one folder per domain, beside console/ (built on them) and writes/ (shared by them). */
const SERVICE_DOMAINS = ['accounts', 'billing', 'crypto', 'reports', 'webhooks'];
const SERVICES_NO_WORKFLOWS = {
  regex: '(^|/)workflows(/|$)',
  message: 'Services start and signal workflows through their clients in src/temporal/clients, never by importing workflow modules.',
};

module.exports = tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.data/**', 'coverage/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' },
    plugins: { '@typescript-eslint': tseslint.plugin, import: importPlugin },
    settings: {
      'import/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js', '.json'] } },
    },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      // Type-only imports are not counted (the plugin skips them): they vanish at run time.
      'import/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // Workflows run in Temporal's deterministic sandbox: only the workflow API, the shared
    // definitions, pure billing rules, and the activities' types.
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restricted(
        {
          regex: '^(?!@temporalio/workflow$|\\.\\./temporal/\\w+Definitions$|\\.\\./temporal/activityOptions$|\\.\\./billing/\\w+$|\\.\\./activities$|\\./\\w+$)',
          message: 'Workflows import only @temporalio/workflow, src/temporal/*Definitions, activityOptions, pure src/billing modules and activity types.',
        },
        { regex: '^\\.\\./activities$', allowTypeImports: true, message: 'Workflows import activities as types only (proxyActivities).' },
      ),
    },
  },
  {
    // Pure domain logic: money, calendar, proration; cryptocurrency addresses, amounts, allocation.
    files: ['src/billing/**/*.ts', 'src/cryptocurrency/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restricted(
        { group: IO_MODULES, message: 'Pure billing and cryptocurrency modules do no I/O.' },
        { regex: IO_LAYERS_REGEX, message: 'Pure billing and cryptocurrency modules import no I/O layer.' },
      ),
    },
  },
  {
    files: ['src/api/**/*.ts', 'src/api/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restricted({
        regex: '(^|/)(activities|workflows)(/|$)',
        message: 'The API calls services; it never imports activities or workflows.',
      }),
    },
  },
  {
    files: ['src/services/**/*.ts', 'src/services/**/*.tsx'],
    rules: { '@typescript-eslint/no-restricted-imports': restricted(SERVICES_NO_WORKFLOWS) },
  },
  {
    // The shared write mechanisms (outbox, idempotency, holds, listing, events) serve every domain and know none.
    files: ['src/services/writes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restricted(SERVICES_NO_WORKFLOWS, {
        regex: `(^|/)\\.\\./(${SERVICE_DOMAINS.join('|')}|console)/`,
        message: 'src/services/writes is shared by the domains: it imports none of them.',
      }),
    },
  },
  {
    // The console is built on the domains' services; they never call it.
    files: SERVICE_DOMAINS.map((d) => `src/services/${d}/**/*.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': restricted(SERVICES_NO_WORKFLOWS, {
        regex: '(^|/)\\.\\./console/',
        message: 'Domain services do not import the console\'s services (the console calls them).',
      }),
    },
  },
);
