/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__test__'],
  testMatch: ['**/*.test.ts'],
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
  testTimeout: 60000,
};
