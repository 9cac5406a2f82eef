/**
 * Shared definitions of webhook delivery: schedule, limits, signals and activity I/O shapes.
 * Pure: imported by services, activities and workflows.
 */
import { defineSignal } from '@temporalio/workflow';

/** Up to 11 attempts (docs/adr/0504-delivery-schedule-and-failures.md). */
export const MAX_ATTEMPTS = 11;
/** Backoff after attempt n (index n-1): 5s, 30s, 2m, 10m, 30m, 1h, 2h, 4h, 8h, 16h (about 31 h in all). */
export const BACKOFF_MS = [5e3, 30e3, 120e3, 600e3, 1800e3, 3600e3, 7200e3, 14400e3, 28800e3, 57600e3] as const;
/** Each wait is the scheduled gap times a factor in [1 - JITTER, 1 + JITTER), so retries of many events spread out. */
export const JITTER = 0.1;
/** The whole HTTP exchange of one attempt, DNS to last byte. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of a response body an attempt keeps. */
export const RESPONSE_SNIPPET_BYTES = 1024;
/** Events and attempts are kept this long (spec: 30 days); idempotency keys 24 hours. */
export const EVENT_RETENTION_MS = 30 * 24 * 3600e3;
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 3600e3;
export const RETENTION_SCHEDULE_ID = 'webhook-retention';

/** The wait after attempt `attempt` for a uniform `random` in [0, 1). */
export function retryDelayMs(attempt: number, random: number): number {
  const base = BACKOFF_MS[attempt - 1];
  return Math.round(base * (1 - JITTER + 2 * JITTER * random));
}

export interface WebhookDeliveryInput {
  /** Also the workflow id and the delivery record's id. */
  deliveryId: string;
  eventId: string;
  endpointId: string;
  /**
   * Set by every start since attempts are local activities by input (workflows/webhookDelivery.ts):
   * such a run records no patch marker. Runs started before it lack the field.
   */
  localAttempts?: true;
}

export interface AttemptInput extends WebhookDeliveryInput {
  attempt: number;
  /** The wait the workflow will take if this attempt fails and may be retried; recorded as next_attempt_at. */
  retryDelayMs: number | null;
}

/**
 * What an attempt came to. `retry`: non-2xx, timeout or TLS error. `disabled`: a connection
 * error (or a private address, or a port not allowed) disabled the endpoint. `stopped`: the endpoint is disabled or
 * deleted, or the event purged, so there is nothing to deliver; or the event belongs to another
 * account or scope than the endpoint (`scope_mismatch`), so it must not be delivered.
 */
export type AttemptOutcome =
  | { result: 'succeeded'; statusCode: number }
  | { result: 'retry'; statusCode: number | null; error: string | null }
  | { result: 'disabled'; error: string }
  | { result: 'stopped'; reason: 'endpoint_disabled' | 'endpoint_deleted' | 'event_purged' | 'scope_mismatch' };

export type DeliveryResult = 'succeeded' | 'failed' | 'endpoint_disabled' | 'stopped';

/** Sent when the endpoint is disabled or deleted: a waiting delivery ends at once. */
export const endpointStoppedSignal = defineSignal<['endpoint_disabled' | 'endpoint_deleted']>('webhookEndpointStopped');
