/**
 * The cluster job of `npm test` (scripts/test.sh): test/cluster against the real Temporal server
 * (scripts/temporal-cluster.sh) with mutual TLS. Left out of the main run (jest.config.js), which
 * has no such server; the test fails, not skips, without TEST_TEMPORAL_CLUSTER_ADDRESS.
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
};
