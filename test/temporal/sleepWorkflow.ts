import { sleep } from '@temporalio/workflow';

/** Sleeps a month of workflow time; used to check that the test server skips time. */
export async function sleepAMonth(): Promise<string> {
  await sleep('30 days');
  return 'woke';
}
