/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 120000,
  maxWorkers: 2,
  setupFiles: ['<rootDir>/test/support/setup.ts'],
  reporters: ['default', '<rootDir>/test/support/summaryReporter.js'],
};
