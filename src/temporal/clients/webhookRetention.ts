/** The webhook retention workflow (`webhookRetentionWorkflow`), run hourly by a Temporal Schedule. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { TemporalContext } from '../context';
import { RETENTION_SCHEDULE_ID } from '../webhookDefinitions';
import { CLIENT_DEADLINE_MS } from './signal';

/** The hourly retention Schedule; creating it again is a no-op. */
export async function ensureRetentionSchedule(temporal: TemporalContext): Promise<void> {
  try {
    await temporal.client.withDeadline(Date.now() + CLIENT_DEADLINE_MS, () =>
      temporal.client.schedule.create({
        scheduleId: RETENTION_SCHEDULE_ID,
        spec: { intervals: [{ every: '1 hour' }] },
        action: {
          type: 'startWorkflow',
          workflowType: 'webhookRetentionWorkflow',
          taskQueue: temporal.taskQueue,
          workflowId: `${RETENTION_SCHEDULE_ID}-run`,
          args: [],
        },
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      }),
    );
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
