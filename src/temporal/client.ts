import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { temporalGrpcInterceptors } from './closedChannel';
import type { NativeConnection } from '@temporalio/worker';
import type { TemporalTls } from '../config';

export type TemporalClientTransport = 'grpc-js' | 'native';

/** The transport a process uses for TEMPORAL_CLIENT_TRANSPORT (`auto`: native in the worker and on Deno). */
export function clientTransportOf(setting: TemporalClientTransport | 'auto', process: { role: 'api' | 'worker'; deno: boolean }): TemporalClientTransport {
  if (setting !== 'auto') return setting;
  return process.role === 'worker' || process.deno ? 'native' : 'grpc-js';
}

export interface TemporalHandle {
  /** grpc-js over node:http2, or the SDK's Rust core (config.temporal.clientTransport). */
  connection: Connection | NativeConnection;
  client: Client;
  taskQueue: string;
}

/** Where and how to reach the server: config.temporal's (TLS and API key read there, at start-up). */
export interface TemporalServer {
  address: string;
  /** null or absent: plaintext. */
  tls?: TemporalTls | null;
  apiKey?: string | null;
}

/** The options both transports' `connect` take for `server` (the SDK's ConnectionOptions and NativeConnectionOptions). */
export function connectionOptions(server: TemporalServer): { address: string; tls?: TemporalTls; apiKey?: string } {
  return {
    address: server.address,
    ...(server.tls ? { tls: server.tls } : {}),
    ...(server.apiKey ? { apiKey: server.apiKey } : {}),
  };
}

/** The grpc-js transport's options: connectionOptions, with retries that end once the connection is closed (temporal/closedChannel.ts). */
export function grpcConnectionOptions(server: TemporalServer): ConnectionOptions {
  return { ...connectionOptions(server), interceptors: temporalGrpcInterceptors() };
}

/** A native (Rust core) connection to `server`: the worker's, the native client transport's. */
export async function nativeConnection(server: TemporalServer): Promise<NativeConnection> {
  return (await import('@temporalio/worker')).NativeConnection.connect(connectionOptions(server));
}

export async function connectTemporal(opts: TemporalServer & { namespace: string; taskQueue: string; clientTransport?: TemporalClientTransport }): Promise<TemporalHandle> {
  // The worker package (and its native core) is loaded only where the native transport is chosen:
  // a Node API process keeps the grpc-js client alone, as before.
  const connection = opts.clientTransport === 'native' ? await nativeConnection(opts) : await Connection.connect(grpcConnectionOptions(opts));
  const client = new Client({ connection, namespace: opts.namespace });
  return { connection, client, taskQueue: opts.taskQueue };
}

/**
 * The connection a worker polls with: the client's own when it is native (one connection, and the
 * client's starts may then be eager: TemporalContext.eagerStart), else a native one of its own,
 * which `close` closes (the client's stays open for its owner to close).
 */
export async function workerConnection(handle: TemporalHandle, server: TemporalServer): Promise<{ connection: NativeConnection; shared: boolean; close(): Promise<void> }> {
  const { NativeConnection: Native } = await import('@temporalio/worker');
  if (handle.connection instanceof Native) return { connection: handle.connection, shared: true, close: async () => undefined };
  const own = await nativeConnection(server);
  return { connection: own, shared: false, close: () => own.close() };
}

export async function pingTemporal(handle: TemporalHandle): Promise<void> {
  await handle.connection.workflowService.getSystemInfo({});
}
