/**
 * Jest config for `npm run mutation` (stryker.config.json): only the unit tests of the pure
 * domain (src/billing, src/cryptocurrency and the pure files of src/cryptography). None of them
 * starts a server or needs TEST_MONGODB_URL, so the Temporal setup file of jest.config.js is left out.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testMatch: [
    '<rootDir>/test/billing/*.test.ts',
    '<rootDir>/test/crypto/*.test.ts',
    // password.test.ts also holds the TOTP tests; password.ts itself (scrypt) is not mutated.
    '<rootDir>/test/lib/{deviceCookie,deviceCookieEdges,password,totp}.test.ts',
  ],
  // These two need a database or bundle the workflows: not unit tests of the pure domain.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/crypto/(priceOracle|workflowBundle)\\.test\\.ts$'],
  setupFiles: ['<rootDir>/jest.mutation.setup.js'],
  testTimeout: 120000,
};
