/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // test/cluster needs the real Temporal server: its own run (jest.cluster.config.js, scripts/test.sh).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/'],
  testTimeout: 120000,
  maxWorkers: 2,
  setupFiles: ['<rootDir>/test/support/setup.ts'],
  reporters: ['default', '<rootDir>/test/support/summaryReporter.js'],
};
