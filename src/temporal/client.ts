import { Client, Connection } from '@temporalio/client';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
  taskQueue: string;
}

export async function connectTemporal(opts: { address: string; namespace: string; taskQueue: string }): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address: opts.address });
  const client = new Client({ connection, namespace: opts.namespace });
  return { connection, client, taskQueue: opts.taskQueue };
}

export async function pingTemporal(handle: TemporalHandle): Promise<void> {
  await handle.connection.workflowService.getSystemInfo({});
}
