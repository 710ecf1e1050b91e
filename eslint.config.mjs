// Lint rules follow Temporal's TypeScript samples: no floating promises anywhere, and no Node
// built-ins inside workflow code (the workflow sandbox is deterministic and has none).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'generated/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
      'web/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', 'web/src/**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read loosely-typed JSON responses; `any` there keeps assertions readable.
    files: ['test/**/*.ts', 'testkit/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // The layout is the architecture: api → workflows → activities → core, never back up; runtime/
  // is infrastructure beside them; tests and benchmarks share testkit/, and nothing imports test/.
  ...[
    [
      'core/**/*.ts',
      ['api', 'activities', 'workflows', 'runtime', 'workers-cpu', 'workers-gpu', 'testkit', 'test', 'bench'],
    ],
    ['activities/**/*.ts', ['api', 'workflows', 'workers-cpu', 'workers-gpu', 'testkit', 'test', 'bench']],
    [
      'runtime/**/*.ts',
      ['api', 'activities', 'workflows', 'workers-cpu', 'workers-gpu', 'testkit', 'test', 'bench'],
    ],
    ['api/**/*.ts', ['workers-cpu', 'workers-gpu', 'testkit', 'test', 'bench']],
    ['{workers-cpu,workers-gpu}/**/*.ts', ['api', 'testkit', 'test', 'bench']],
    ['{bench,testkit}/**/*.ts', ['test']],
    // The edge agent runs on a device: it has no database, no Temporal and no platform process.
    [
      'edge-agent/**/*.ts',
      ['api', 'activities', 'workflows', 'runtime', 'workers-cpu', 'workers-gpu', 'testkit', 'test', 'bench'],
    ],
  ].map(([files, forbidden]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: forbidden.map((folder) => ({
            regex: `^(\\.\\./)+${folder}(/|$)`,
            message: `${files.split('/')[0]} does not import from ${folder}/ (README, Architecture)`,
          })),
        },
      ],
    },
  })),
  {
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'workflow code is deterministic and has no Node built-ins',
          })),
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              allowTypeImports: true,
              message: 'workflows import activities by type only (proxyActivities<typeof activities>)',
            },
          ],
        },
      ],
    },
  },
  {
    // The UI talks to the platform only over HTTP: nothing from the server's folders is bundled into it.
    files: ['web/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./){2,}',
              message: 'web/src imports only web/src and packages (README, Architecture)',
            },
          ],
        },
      ],
    },
  },
);
