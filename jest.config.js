// Two projects split the suites: `fast` (the native core's and the package's suites that check a
// behaviour once) and `full` (every other suite: the TS layer, end to end, and the core's load
// suites: floods, 300- and 1,000-run loops, the sandbox's namespaces, npm packs). `npm test` runs
// both; `npm run test:fast` runs `fast` only (`jest --selectProjects fast`). Every suite is in
// exactly one project (__test__/pkg/jest-projects.test.ts checks it).

/** Suites of __test__/core and __test__/pkg that take minutes: in `full`, not in `fast`. */
const SLOW = [
  'core/containment',
  'core/exit-order',
  'core/hardening',
  'core/kill-once',
  'core/output-load',
  'core/pty-input',
  'core/sandbox',
  'core/stream',
  'pkg/require-feature',
  'pkg/sdk-copies',
];

const slow = `/__test__/(${SLOW.join('|')})\\.test\\.ts$`;

/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: {
    // 151002: ts-jest's note about hybrid module kinds (module node20); harmless here.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { ignoreCodes: [151002] } }],
    // The ACP SDK ships ESM only; jest's module system needs it as CommonJS.
    '/node_modules/@agentclientprotocol/sdk/.+\\.js$': [
      'ts-jest',
      {
        tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022', isolatedModules: true },
        diagnostics: false,
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!@agentclientprotocol/sdk/)'],
  testMatch: ['**/*.test.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60000,
  projects: [
    {
      ...shared,
      displayName: 'fast',
      roots: ['<rootDir>/__test__/core', '<rootDir>/__test__/pkg'],
      testPathIgnorePatterns: ['/node_modules/', slow],
    },
    {
      ...shared,
      displayName: 'full',
      roots: ['<rootDir>/__test__'],
      // The fast suites are the other project's: core/ and pkg/ suites unless listed in SLOW.
      testPathIgnorePatterns: ['/node_modules/', `/__test__/(?!(${SLOW.join('|')})\\.test\\.ts$)(core|pkg)/`],
    },
  ],
};
