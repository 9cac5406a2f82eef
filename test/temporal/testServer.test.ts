import { Worker } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { timeSkippingEnvironment } from '../support/temporal';

describe('Temporal test server (time skipping, from Maven Central)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await timeSkippingEnvironment();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('runs a 30-day timer without waiting 30 days', async () => {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'test-server-check',
      workflowsPath: require.resolve('./sleepWorkflow'),
    });
    const before = await env.currentTimeMs();
    const started = Date.now();
    const result = await worker.runUntil(
      env.client.workflow.execute('sleepAMonth', { taskQueue: 'test-server-check', workflowId: 'sleep-check' }),
    );
    expect(result).toBe('woke');
    expect((await env.currentTimeMs()) - before).toBeGreaterThanOrEqual(30 * 24 * 3600 * 1000);
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});
