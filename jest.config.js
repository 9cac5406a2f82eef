/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // .tsx: the server-rendered pages (preact's automatic JSX runtime, as tsconfig.json says).
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    '^.+\\.tsx$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true }, transform: { react: { runtime: 'automatic', importSource: 'preact' } } } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // test/cluster needs the real Temporal server: its own run (jest.cluster.config.js, scripts/test.sh).
  // test/db/ferretdbIndexes reads PostgreSQL's catalog: not there with EMBEDDED_DB=sqlite (test.sh says so).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/', ...(process.env.EMBEDDED_DB === 'sqlite' ? ['<rootDir>/test/db/ferretdbIndexes'] : [])],
  testTimeout: 120000,
  maxWorkers: 2,
  setupFiles: ['<rootDir>/test/support/setup.ts'],
  reporters: ['default', '<rootDir>/test/support/summaryReporter.js'],
};
