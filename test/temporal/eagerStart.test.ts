/**
 * Eager starts (TemporalContext.eagerStart): in the worker process, whose worker polls the task
 * queue on the client's own native connection, a delivery workflow's first task comes back in the
 * start's reply instead of through the task queue. Against the dev server `npm test` runs (the
 * time-skipping test server does not hand out eager tasks), with the real workflows and delivery
 * activities.
 */
import { Client, WorkflowClientInterceptor } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { useTestDatabase } from '../support/db';
import { devServerAddress } from '../support/temporal';
import { testDependencies } from '../support/dependencies';
import { workflowsPath } from '../support/workflows';
import { createWebhooksActivities } from '../../src/activities/webhooks';
import { startDeliveryWorkflow } from '../../src/temporal/clients/webhookDelivery';
import { WebhookDelivery } from '../../src/models/webhookDelivery';
import { insertDeliveryRecord } from '../../src/services/webhooks/webhookDispatch';
import { waitFor } from '../support/wait';

useTestDatabase();

let connection: NativeConnection;
let worker: Worker;
let workerRun: Promise<void>;
const taskQueue = `eager-start-${process.pid}-${Date.now()}`;
/** What each start reported, in order: whether its first task came back with it. */
const eagerlyStarted: boolean[] = [];
let client: Client;

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: devServerAddress() });
  const recordStarts: WorkflowClientInterceptor = {
    async startWithDetails(input, next) {
      const out = await next(input);
      eagerlyStarted.push(out.eagerlyStarted);
      return out;
    },
  };
  client = new Client({ connection, namespace: 'default', interceptors: { workflow: [recordStarts] } });
  const deps = testDependencies({ temporal: { client, taskQueue } });
  worker = await Worker.create({ connection, namespace: 'default', taskQueue, workflowsPath, activities: createWebhooksActivities(deps) });
  workerRun = worker.run();
  // Eager tasks go to a worker that has started polling.
  await waitFor(async () => worker.getState() === 'RUNNING', 'worker running');
});

afterAll(async () => {
  worker?.shutdown();
  await workerRun?.catch(() => undefined);
  await connection?.close();
});

async function deliveryOfMissingEndpoint(eagerStart: boolean): Promise<boolean> {
  const deliveryId = `whd_eager_${eagerStart}_${Date.now()}`;
  // A pending record (as a redelivery has), which the attempt ends.
  await insertDeliveryRecord({ deliveryId, endpoint: { _id: 'we_missing', account_id: 'acct_eager', sandbox: null }, event: { id: 'evt_missing', event: 'customer.created' } });
  const started = await startDeliveryWorkflow({ client, taskQueue, eagerStart }, { deliveryId, eventId: 'evt_missing', endpointId: 'we_missing' });
  expect(started).toBe(true);
  // The delivery runs on this worker: its endpoint does not exist, so it ends at once.
  await client.workflow.getHandle(deliveryId).result();
  expect(await WebhookDelivery.findById(deliveryId).lean()).toMatchObject({ status: 'canceled', ended_reason: 'endpoint_deleted' });
  return eagerlyStarted[eagerlyStarted.length - 1];
}

it('a delivery started with eagerStart gets its first task in the start reply, and runs to its end', async () => {
  expect(await deliveryOfMissingEndpoint(true)).toBe(true);
});

it('without eagerStart (the API process) the start goes through the task queue', async () => {
  expect(await deliveryOfMissingEndpoint(false)).toBe(false);
});
