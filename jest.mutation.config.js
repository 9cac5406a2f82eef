/**
 * Jest config for `npm run mutation` (stryker.config.json): only the unit tests of the pure
 * domain (src/billing, src/cryptocurrency and the pure files of src/cryptography). None of them
 * starts a server or needs TEST_MONGODB_URL, so the Temporal setup file of jest.config.js is left out.
 * jest.mutation.setup.js caps fast-check at MUTATION_NUM_RUNS runs per property (default 100).
 *
 * Surviving mutants reviewed as equivalent (no input tells them apart), so left alive on purpose:
 * - cryptography/webhookSignature.ts: `extractable: true` on the HMAC key (never exported);
 *   timingSafeEqualHex's length check and `i <= a.length` (both sides are always 64 hex
 *   characters; charCodeAt past the end is NaN, and NaN ^ NaN is 0); `tolerance < 0` (a
 *   negative tolerance fails the `> tolerance` check anyway); `candidates` starting non-empty,
 *   `candidates.length === 0` and the unanchored v1 regexes (a candidate that is not exactly 64
 *   hex digits never equals the HMAC); `eq <= 0` (an empty key matches neither `t` nor `v1`);
 *   the `header ?? ''` fallback string.
 * - cryptography/totp.ts: the 6-digit regex and its anchors (otpauth refuses a token whose
 *   length is not 6 and compares digits only); `new Secret({})` (otpauth's default is 20 bytes).
 * - cryptography/tokens.ts, deviceCookie.ts: the `?? ''` fallback strings (any non-cookie,
 *   non-`Bearer` string is refused the same way).
 * - cryptocurrency/addresses.ts: `network === 'any'` in accepts() (ETH never calls it);
 *   explorerFor's `if (sandbox)` and its 'test' mode (a mainnet address is mainnet either way).
 * - cryptocurrency/allocation.ts: `<` to `<=` in the comparator on keys already known to differ;
 *   `a.id !== b.id` to true (invoice ids are unique, so only an invoice compared with itself
 *   reaches that line).
 * - cryptocurrency/amounts.ts: `>=` to `>` before returning a valid string as given (the
 *   Decimal path writes the same digits); priceFreshness.ts: `entry.price === null` (the
 *   null price is returned either way).
 * Not equivalent, left alive: transactionHashes.ts `join('\n')` to `join('')` differs only for
 * crafted fields (a scope ending in 'BTC' + a txid, an address_key starting with 'ETH' + a hash).
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
