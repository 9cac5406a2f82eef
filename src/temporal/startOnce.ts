import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';

/**
 * Runs `start` (a `client.workflow.start`), treating "a workflow with this id already exists"
 * as done: workflow ids derive from what they own, so that one is the same workflow. True
 * when this call started it.
 */
export async function startOnce(start: () => Promise<unknown>): Promise<boolean> {
  try {
    await start();
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
