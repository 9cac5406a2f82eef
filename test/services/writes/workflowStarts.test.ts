/**
 * The two ways a process starts workflows (real dev server, real database): `outbox` records an
 * intent and never throws for Temporal's sake; `direct` (the worker's activities) records
 * nothing and throws when the start fails, so the activity is retried.
 */
import pino from 'pino';
import { grpcConnectionOptions } from '../../../src/temporal/client';
import { Client, Connection } from '@temporalio/client';
import { useTestDatabase } from '../../support/db';
import { devServerAddress } from '../../support/temporal';
import { closedPort } from '../../support/httpsReceiver';
import { createWorkflowStarts, recordWorkflowStart, requestWorkflowStart } from '../../../src/services/writes/workflowStarts';
import { WorkflowStart } from '../../../src/models/workflowStart';
import { randomString } from '../../../src/lib/ids';
import { waitFor } from '../../support/wait';
import { allocationWorkflows } from '../../../src/temporal/clients/allocation';
import { CryptoTransaction } from '../../../src/models/cryptoTransaction';
import { workflowIds } from '../../../src/temporal/workflowIds';
import { allocateSignal } from '../../../src/temporal/cryptoDefinitions';

useTestDatabase();
const logger = pino({ level: 'silent' });
// No worker polls it: a started workflow just waits, which is all these tests look at.
const taskQueue = `workflow-starts-test-${randomString(6)}`;

let connection: Connection;
let client: Client;
beforeAll(async () => {
  connection = await Connection.connect(grpcConnectionOptions({ address: devServerAddress() }));
  client = new Client({ connection });
});
afterAll(async () => {
  await connection.close();
});

const request = (workflowId: string) => ({ workflowId, workflowType: 'invoiceDueWorkflow', args: [{ invoiceId: workflowId }] });

describe('workflow starts', () => {
  it('outbox: records the intent, starts, and marks it started', async () => {
    const id = `starts-outbox-${randomString(8)}`;
    await requestWorkflowStart(createWorkflowStarts({ client, taskQueue }, logger), request(id));
    const intent = await WorkflowStart.findById(id).lean<{ started: boolean }>();
    expect(intent?.started).toBe(true);
    expect((await client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
    await client.workflow.getHandle(id).terminate('test done');
  });

  it('direct: starts without recording an intent', async () => {
    const id = `starts-direct-${randomString(8)}`;
    const pending = await recordWorkflowStart(createWorkflowStarts({ client, taskQueue }, logger, 'direct'), request(id));
    expect(await WorkflowStart.findById(id).lean()).toBeNull(); // nothing before the start either
    await pending.start();
    expect(await WorkflowStart.findById(id).lean()).toBeNull();
    expect((await client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
    // Repeated (a retried activity): the running workflow is the same one, no error.
    await requestWorkflowStart(createWorkflowStarts({ client, taskQueue }, logger, 'direct'), request(id));
    await client.workflow.getHandle(id).terminate('test done');
  });

  it('Temporal unreachable: the outbox keeps the intent for its sweeper, direct throws', async () => {
    // Lazy: the connection fails at the start, as a process's client does when the server goes away.
    const unreachable = Connection.lazy(grpcConnectionOptions({ address: `127.0.0.1:${await closedPort()}` }));
    const deadClient = new Client({ connection: unreachable });
    const outboxId = `starts-down-outbox-${randomString(8)}`;
    await requestWorkflowStart(createWorkflowStarts({ client: deadClient, taskQueue }, logger), request(outboxId));
    expect(await WorkflowStart.findById(outboxId).lean<{ started: boolean }>()).toMatchObject({ started: false });
    const directId = `starts-down-direct-${randomString(8)}`;
    await expect(requestWorkflowStart(createWorkflowStarts({ client: deadClient, taskQueue }, logger, 'direct'), request(directId))).rejects.toThrow();
    expect(await WorkflowStart.findById(directId).lean()).toBeNull();
    await unreachable.close().catch(() => undefined);
  }, 30_000);

  it('allocation sweep: signals a transaction still due once it is old enough, and not again soon after', async () => {
    const allocation = allocationWorkflows(createWorkflowStarts({ client, taskQueue }, logger));
    const customer = `cust_sweep${randomString(8)}`;
    const tx = (id: string, createdAt: Date) => ({
      _id: id, account_id: 'acct_sweep', sandbox: null, customer_id: customer, currency: 'BTC', amount: '0.001', transaction_id: id,
      transaction_source: 'manual_entry', timestamp: createdAt, to_address_id: 'addr', to_address: 'a', wallet_id: 'w', dedupe_key: id,
      allocation_due: true, allocated_at: null, created_at: createdAt, updated_at: createdAt,
    });
    const old = `trxn_old${randomString(8)}`;
    const young = `trxn_young${randomString(8)}`;
    await CryptoTransaction.collection.insertMany([tx(old, new Date(Date.now() - 60_000)), tx(young, new Date())] as never[]);
    expect(await allocation.sweep({ minAgeMs: 30_000, batch: 10 })).toBe(1);
    // The customer's workflow got the old one (no worker polls this queue: it waits with its signal).
    const handle = client.workflow.getHandle(workflowIds.allocation(customer));
    const { events } = await handle.fetchHistory();
    const signals = events!.filter((e) => e.workflowExecutionSignaledEventAttributes).map((e) => e.workflowExecutionSignaledEventAttributes!.signalName);
    expect(signals).toEqual([allocateSignal.name]);
    // Signalled a moment ago: not again (it may be stuck while the oracle is down).
    expect(await allocation.sweep({ minAgeMs: 30_000, batch: 10 })).toBe(0);
    await handle.terminate('test done');
  });

  it('a start that fails after another got through does not pause the outbox; one that fails after it does', async () => {
    // The server as a restart leaves it: a start sent before it came back fails late (here when
    // `fail` is called), while a start sent after goes through.
    const late: { fail: () => void }[] = [];
    const unavailable = () => Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14 });
    const restarting = {
      withDeadline: client.withDeadline.bind(client),
      workflow: {
        start: (type: string, opts: { workflowId: string }) =>
          opts.workflowId.startsWith('late-')
            ? new Promise((_, reject) => late.push({ fail: () => reject(unavailable()) }))
            : client.workflow.start(type, opts as never),
      },
    } as unknown as Client;
    const outbox = createWorkflowStarts({ client: restarting, taskQueue }, logger);

    const sentBefore = requestWorkflowStart(outbox, request(`late-${randomString(8)}`));
    // Sent before the next one is asked for (each request writes its intent first, so under load
    // the second could otherwise be sent first, which makes the late failure an outage).
    await waitFor(async () => late.length === 1, 'the late start to be sent');
    const through = `starts-through-${randomString(8)}`;
    await requestWorkflowStart(outbox, request(through));
    late[0].fail();
    await sentBefore;
    expect(outbox.pausedUntil).toBe(0);
    // So the next request still starts at once.
    const next = `starts-next-${randomString(8)}`;
    await requestWorkflowStart(outbox, request(next));
    expect(await WorkflowStart.findById(next).lean<{ started: boolean }>()).toMatchObject({ started: true });

    // A start sent after the last one that got through, failing: that is an outage.
    const sentAfter = requestWorkflowStart(outbox, request(`late-${randomString(8)}`));
    await waitFor(async () => late.length === 2, 'the second late start to be sent');
    late[1].fail();
    await sentAfter;
    expect(outbox.pausedUntil).toBeGreaterThan(Date.now());
    const skipped = `starts-skipped-${randomString(8)}`;
    await requestWorkflowStart(outbox, request(skipped));
    expect(await WorkflowStart.findById(skipped).lean<{ started: boolean }>()).toMatchObject({ started: false });

    for (const id of [through, next]) await client.workflow.getHandle(id).terminate('test done');
  });
});
