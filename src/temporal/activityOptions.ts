/**
 * Shared by workflows (proxyActivities) and activities: an activity heartbeats every
 * HEARTBEAT_EVERY_MS while it runs, and one silent for ACTIVITY_HEARTBEAT_TIMEOUT (its worker
 * died) is retried on another worker at once rather than after its start-to-close timeout.
 */
export const ACTIVITY_HEARTBEAT_TIMEOUT = '10 seconds';
export const HEARTBEAT_EVERY_MS = 2_000;
