/**
 * A grpc-js connection closed while a call waits out a retry's backoff (src/temporal/closedChannel.ts):
 * the call rejects, and nothing is thrown into the process. Without the guard, the SDK's retry
 * timer throws "Channel has been shut down" as an uncaught exception (which fails this file, or
 * whichever file the Jest worker runs next) and the call's promise never settles (the test times out).
 */
import { Client, Connection } from '@temporalio/client';
import { grpcConnectionOptions } from '../../src/temporal/client';
import { closedPort } from '../support/httpsReceiver';

it('a call retrying against an unreachable server rejects when its connection is closed, and throws nothing afterwards', async () => {
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    const connection = Connection.lazy(grpcConnectionOptions({ address: `127.0.0.1:${await closedPort()}` }));
    const client = new Client({ connection });
    const call = client.withDeadline(Date.now() + 10_000, () => client.workflow.start('anyWorkflow', { taskQueue: 'closed-channel', workflowId: 'closed-channel' }));
    const outcome = call.then(() => 'started', (err: Error) => `rejected: ${err.message}`);
    // The first attempts fail at once (connection refused); the retry interceptor is now in its backoff.
    await new Promise((r) => setTimeout(r, 1_000));
    await connection.close();
    expect(await outcome).toMatch(/^rejected/);
    // Past the longest backoff (5 s): a retry timer left behind would have fired by now.
    await new Promise((r) => setTimeout(r, 5_500));
    expect(uncaught.map((e) => e.message)).toEqual([]);
  } finally {
    process.off('uncaughtException', onUncaught);
  }
}, 30_000);
