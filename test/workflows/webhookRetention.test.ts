import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { Event } from '../../src/models/event';

useTestDatabase();
const taskQueue = 'webhook-retention-test';
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

it('the retention workflow purges events past retention, keeps recent ones, and replays', async () => {
  const old = new Date(Date.now() - 31 * 86_400_000);
  const recent = new Date();
  const event = (id: string, at: Date) => ({ _id: id, account_id: 'acct_retention', sandbox: null, event: 'customer.created', payload: {}, timestamp: at, dispatched: true, dispatched_at: at, created_at: at });
  await Event.collection.insertMany([event('evt_retention_old', old), event('evt_retention_new', recent)] as never[]);
  const worker = await createTestWorker(env, taskQueue);
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('webhookRetentionWorkflow', { taskQueue, workflowId: 'retention-test', args: [] });
    const result = (await handle.result()) as { events: number };
    expect(result.events).toBeGreaterThanOrEqual(1);
    expect(await Event.exists({ _id: 'evt_retention_old' })).toBeNull();
    expect(await Event.exists({ _id: 'evt_retention_new' })).not.toBeNull();
    await replay(recordHistory('webhookRetention-purges-current', await handle.fetchHistory()), 'replay-retention');
    await replay(fixtureHistory('webhookRetention-purges'), 'replay-retention-kept');
  });
});
