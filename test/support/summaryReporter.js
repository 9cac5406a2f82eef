/**
 * Prints the plain closing line `N passed, N failed` (and skipped) that CI reads. With
 * TEST_SUMMARY_FILE set (scripts/test.sh) it is also written there, so the script can print it
 * again as the very last line, after Jest's own summary (stderr) and the servers' shutdown.
 */
const fs = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    // A file that failed outside its tests (it did not load, or a beforeAll/afterAll hook threw)
    // counts as one failure: its tests alone may all have passed.
    const brokenFiles = results.testResults.filter((r) => r.testExecError || (r.failureMessage && r.numFailingTests === 0)).length;
    const line = `Tests: ${results.numPassedTests} passed, ${results.numFailedTests + brokenFiles} failed` + (skipped ? `, ${skipped} skipped` : '');
    process.stdout.write(`\n${line}\n`);
    if (process.env.TEST_SUMMARY_FILE) fs.writeFileSync(process.env.TEST_SUMMARY_FILE, `${line}\n`);
  }
}
module.exports = SummaryReporter;
