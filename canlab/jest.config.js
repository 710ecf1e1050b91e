module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
};
