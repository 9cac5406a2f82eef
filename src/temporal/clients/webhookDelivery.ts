/**
 * The webhook delivery workflow (`webhookDeliveryWorkflow`), one per (event, endpoint) or per
 * redelivery, started by type name; its waiting runs are ended when their endpoint stops.
 */
import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { WebhookDelivery } from '../../models/webhookDelivery';
import type { TemporalContext } from '../context';
import { endpointStoppedSignal, WebhookDeliveryInput } from '../webhookDefinitions';
import { startOnce } from '../startOnce';
import { CLIENT_DEADLINE_MS } from './signal';

type StopReason = 'endpoint_disabled' | 'endpoint_deleted';

export interface WebhookDeliveryWorkflows {
  /** Starts one delivery; false when it was already started (now or ever, within retention). */
  start(input: WebhookDeliveryInput): Promise<boolean>;
  /** Ends the waiting deliveries of an endpoint that was disabled or deleted. */
  stopDeliveriesOf(endpointId: string, reason: StopReason): Promise<void>;
}

/** Starts one delivery workflow; false when it was already started (now or ever, within retention). */
export async function startDeliveryWorkflow(temporal: TemporalContext, input: WebhookDeliveryInput): Promise<boolean> {
  return startOnce(() =>
    temporal.client.withDeadline(Date.now() + CLIENT_DEADLINE_MS, () =>
      temporal.client.workflow.start('webhookDeliveryWorkflow', {
        taskQueue: temporal.taskQueue,
        workflowId: input.deliveryId,
        // Local attempts by input: no patch marker, so no search-attribute upsert per delivery.
        args: [{ ...input, localAttempts: true }],
        // The workflow id derives from (event, endpoint): a second run, even after the first closed, would deliver twice.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        // In the worker process: the first task comes back with the start (TemporalContext.eagerStart).
        ...(temporal.eagerStart ? { requestEagerStart: true } : {}),
      }),
    ),
  );
}

/** Ends the waiting deliveries of an endpoint that was disabled or deleted. Best effort: a missed one ends at its next attempt. */
export async function stopDeliveriesOf(client: Client | null, endpointId: string, reason: StopReason): Promise<void> {
  if (!client) return;
  const pending = await WebhookDelivery.find({ endpoint_id: endpointId, status: 'pending' }, { _id: 1 }).lean<{ _id: string }[]>();
  await Promise.all(
    pending.map((d) =>
      client
        .withDeadline(Date.now() + CLIENT_DEADLINE_MS, () => client.workflow.getHandle(d._id).signal(endpointStoppedSignal, reason))
        .catch(() => undefined),
    ),
  );
}

export function webhookDeliveryWorkflows(temporal: TemporalContext): WebhookDeliveryWorkflows {
  return {
    start: (input) => startDeliveryWorkflow(temporal, input),
    stopDeliveriesOf: (endpointId, reason) => stopDeliveriesOf(temporal.client, endpointId, reason),
  };
}
