/** Shared Temporal names: pure, importable from workflows. */
export const DEFAULT_TASK_QUEUE = 'payments';
