/** Temporal environments for tests: the time-skipping test server, or the dev server npm test runs. */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestApi, type TestApi } from './api';

/**
 * The SDK gives the test server 5 s to open its port; a JVM starting on a loaded 2-core
 * machine can take longer, so a start is tried up to three times.
 */
export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER_PATH is not set: run the tests with `npm test`');
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    } catch (err) {
      lastError = err;
      if (!String((err as Error)?.message).includes('did not start')) throw err;
    }
  }
  throw lastError;
}

export function devServerAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run the tests with `npm test`');
  return address;
}

/**
 * A workflow test file's stack: the time-skipping test server, and the real app starting its
 * workflows there on `taskQueue` (the file's own worker polls it). Set up before the file's tests,
 * torn down after.
 */
export function useTimeSkippingApi(taskQueue: string): { env: TestWorkflowEnvironment; api: TestApi } {
  const stack = {} as { env: TestWorkflowEnvironment; api: TestApi };
  beforeAll(async () => {
    stack.env = await timeSkippingEnvironment();
    stack.api = await startTestApi({}, {}, { client: stack.env.client, taskQueue });
  });
  afterAll(async () => {
    await stack.api?.close();
    await stack.env?.teardown();
  });
  return stack;
}
