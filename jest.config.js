// One runner for the whole repository: unit tests sit beside the code (`*.test.ts`), integration
// tests under test/ (`*.int.test.ts`) need the local stack and run one at a time (./platform test).
const transform = { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
// ESM-only packages that jest (on Node 20) must compile to CommonJS like our own code.
const transformIgnorePatterns = [
  '/node_modules/(?!(jose|@prisma/schema-engine-wasm|hyparquet|hyparquet-writer|@otplib|@noble/hashes|@scure/base|openid-client|oauth4webapi|oidc-provider)/)',
];

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: '<rootDir>/test/helpers/node-environment.js',
      transform,
      transformIgnorePatterns,
      roots: [
        '<rootDir>/core',
        '<rootDir>/api',
        '<rootDir>/activities',
        '<rootDir>/workflows',
        '<rootDir>/web',
        '<rootDir>/canlab',
      ],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.test\\.ts$'],
    },
    {
      displayName: 'integration',
      testEnvironment: '<rootDir>/test/helpers/node-environment.js',
      transform,
      transformIgnorePatterns,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.int.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/jest-setup.ts'],
    },
  ],
};
