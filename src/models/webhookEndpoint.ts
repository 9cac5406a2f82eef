import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

/**
 * A merchant's webhook endpoint. The signing secret is kept in clear because every delivery
 * attempt signs with it (an HMAC key cannot be stored as a hash).
 */
const webhookEndpointSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    url: { type: String, required: true },
    description: { type: String, default: null },
    enabled: { type: Boolean, default: true },
    /** Event names, or ['*'] for every event. */
    subscriptions: { type: [String], required: true },
    signing_secret: { type: String, required: true },
    /** Why the service disabled it (a connection error on delivery); null when enabled or disabled by PUT. */
    disabled_reason: { type: String, default: null },
    /** Stepped by each change (the API's and the worker's auto-disable), one writer at a time (services/writes/heldWrites.ts). */
    write_version: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false, minimize: false },
);
webhookEndpointSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(webhookEndpointSchema);

export type WebhookEndpointDoc = InferSchemaType<typeof webhookEndpointSchema> & {
  _id: string;
  subscriptions: string[];
  created_at: Date;
  updated_at: Date;
};
export const WebhookEndpoint = model('WebhookEndpoint', webhookEndpointSchema, 'webhook_endpoints');
