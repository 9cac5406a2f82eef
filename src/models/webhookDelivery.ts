import { Schema, model } from 'mongoose';
import { scopedFields, timestamps } from './scope';

/**
 * One delivery of one event to one endpoint: the record of one delivery workflow (its `_id` is
 * the workflow id). Attempts are embedded; attempt n is written at `attempts.<n-1>`, so
 * recording it again (a retried activity) overwrites the same slot instead of adding one.
 */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

/** Why an attempt failed without an HTTP status. */
export type AttemptErrorKind = 'timeout' | 'tls_error' | 'connection_error' | 'private_address' | 'port_not_allowed';

export interface WebhookAttempt {
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  error: AttemptErrorKind | null;
  /** Human-readable detail of `error` (the system error code). */
  error_detail: string | null;
  latency_ms: number;
  /** The first 1 KiB of the response body. */
  response_body: string | null;
}

const attemptSchema = new Schema<WebhookAttempt>(
  {
    attempt: { type: Number, required: true },
    attempted_at: { type: Date, required: true },
    status_code: { type: Number, default: null },
    error: { type: String, default: null },
    error_detail: { type: String, default: null },
    latency_ms: { type: Number, required: true },
    response_body: { type: String, default: null },
  },
  { _id: false, versionKey: false },
);

const webhookDeliverySchema = new Schema(
  {
    ...scopedFields,
    endpoint_id: { type: String, required: true },
    event_id: { type: String, required: true },
    event: { type: String, required: true },
    /** True for a delivery started by POST .../redeliver. */
    redelivery: { type: Boolean, default: false },
    status: { type: String, enum: ['pending', 'succeeded', 'failed', 'canceled'], default: 'pending' },
    /** Why a delivery ended without success: `attempts_exhausted`, `endpoint_disabled`, `endpoint_deleted`, `event_purged`. */
    ended_reason: { type: String, default: null },
    next_attempt_at: { type: Date, default: null },
    attempts: { type: [attemptSchema], default: [] },
  },
  { timestamps, versionKey: false, minimize: false },
);
webhookDeliverySchema.index({ endpoint_id: 1, created_at: -1, _id: -1 });
webhookDeliverySchema.index({ created_at: 1 });

export interface WebhookDeliveryDoc {
  _id: string;
  account_id: string;
  sandbox: string | null;
  endpoint_id: string;
  event_id: string;
  event: string;
  redelivery: boolean;
  status: DeliveryStatus;
  ended_reason: string | null;
  next_attempt_at: Date | null;
  attempts: (WebhookAttempt | null)[];
  created_at: Date;
  updated_at: Date;
}
export const WebhookDelivery = model('WebhookDelivery', webhookDeliverySchema, 'webhook_deliveries');
