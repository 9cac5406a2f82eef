/** Temporal environments for tests: the time-skipping test server, or the dev server npm test runs. */
import { TestWorkflowEnvironment } from '@temporalio/testing';

export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER_PATH is not set: run the tests with `npm test`');
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
}

export function devServerAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run the tests with `npm test`');
  return address;
}
