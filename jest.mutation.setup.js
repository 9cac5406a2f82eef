// `npm run mutation` only (jest.mutation.config.js), never the normal Jest run.
const fastCheck = require('fast-check');

// A property that fails stops at its first counterexample instead of shrinking it, since Stryker
// only needs to know that a mutant is killed, not the smallest case.
fastCheck.configureGlobal({ endOnFailure: true });

// Each property runs at most MUTATION_NUM_RUNS cases (default 100, fast-check's own default)
// instead of the thousands some tests ask for: every mutant reruns the tests that cover it, and a
// wrong formula fails within the first cases (MUTATION_NUM_RUNS=0: no cap). `numRuns` given to fc.assert overrides fc.configureGlobal, so fc.assert itself is
// wrapped; the tests read it from the module's default export (`import fc from 'fast-check'`),
// whose properties are read-only getters, hence a copy with the wrapped assert.
const cap = Number(process.env.MUTATION_NUM_RUNS ?? 100);
if (Number.isInteger(cap) && cap > 0) {
  const original = fastCheck.default;
  const capped = (params) => ({ ...params, numRuns: Math.min(params?.numRuns ?? 100, cap) });
  fastCheck.default = {
    ...original,
    assert: (property, params) => original.assert(property, capped(params)),
    check: (property, params) => original.check(property, capped(params)),
  };
  fastCheck.assert = fastCheck.default.assert;
  fastCheck.check = fastCheck.default.check;
}
