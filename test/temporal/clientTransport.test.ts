/**
 * The Temporal client's two transports (TEMPORAL_CLIENT_TRANSPORT): grpc-js, the default of a Node
 * API process, and native (the SDK's NativeConnection), the default of the worker and on Deno.
 * Both reach the dev server `npm test` runs, and a Client on either starts and reads a workflow.
 */
import { clientTransportOf, connectTemporal, pingTemporal, TemporalClientTransport } from '../../src/temporal/client';
import { devServerAddress } from '../support/temporal';

describe.each<TemporalClientTransport>(['grpc-js', 'native'])('the %s transport', (clientTransport) => {
  it('pings the server and serves a Client', async () => {
    const taskQueue = `transport-${clientTransport}-${process.pid}-${Date.now()}`;
    const handle = await connectTemporal({ address: devServerAddress(), namespace: 'default', taskQueue, clientTransport });
    try {
      await pingTemporal(handle);
      // No worker polls this queue: the workflow stays running, which is all this needs.
      const wf = await handle.client.workflow.start('webhookRetentionWorkflow', { taskQueue, workflowId: `${taskQueue}-wf`, args: [] });
      expect((await wf.describe()).status.name).toBe('RUNNING');
      await wf.terminate('test done');
    } finally {
      await handle.connection.close();
    }
  });
});

describe('clientTransportOf', () => {
  it('takes native in the worker and on Deno, grpc-js in a Node API process, when left to auto', () => {
    expect(clientTransportOf('auto', { role: 'worker', deno: false })).toBe('native');
    expect(clientTransportOf('auto', { role: 'api', deno: true })).toBe('native');
    expect(clientTransportOf('auto', { role: 'api', deno: false })).toBe('grpc-js');
  });

  it('keeps an explicit setting in every process', () => {
    expect(clientTransportOf('grpc-js', { role: 'worker', deno: false })).toBe('grpc-js');
    expect(clientTransportOf('native', { role: 'api', deno: false })).toBe('native');
  });
});
