// `npm run mutation` only: a property that fails stops at its first counterexample instead of
// shrinking it, since Stryker only needs to know that a mutant is killed, not the smallest case.
require('fast-check').configureGlobal({ endOnFailure: true });
