/** Run by the retention Schedule: purges expired events, deliveries (with their attempts) and idempotency keys. */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';

const { purgeExpiredRecords } = proxyActivities<Activities>({
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumAttempts: 5 },
});

export async function webhookRetentionWorkflow(): Promise<{ events: number; deliveries: number; idempotencyKeys: number }> {
  return purgeExpiredRecords();
}
