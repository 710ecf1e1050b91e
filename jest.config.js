// One runner for the whole repository: unit tests sit beside the code (`*.test.ts`), integration
// tests under test/ (`*.int.test.ts`) need the local stack and run in band.
const transform = { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] };

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/core', '<rootDir>/api', '<rootDir>/activities', '<rootDir>/workflows', '<rootDir>/canlab'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.test\\.ts$'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.int.test.ts'],
      testTimeout: 120000,
    },
  ],
};
