import { workerCapacity } from '../../src/startup/workerOptions';

const settings = (cached: number, pollers = 60, tasks = 200, threads = 2) => ({
  workerMaxCachedWorkflows: cached,
  workerWorkflowTaskPollers: pollers,
  workerMaxConcurrentWorkflowTasks: tasks,
  workerWorkflowThreads: threads,
  workerStickyTimeoutSeconds: 10,
});

describe('workerCapacity', () => {
  it('polls the task queue as much as the sticky queue', () => {
    const c = workerCapacity(settings(400));
    expect(c.nonStickyToStickyPollRatio).toBe(1);
    expect(c.maxConcurrentWorkflowTaskPolls).toBe(60);
    expect(c.maxCachedWorkflows).toBe(400);
    expect(c.maxConcurrentWorkflowTaskExecutions).toBe(200);
    expect(c.workflowThreadPoolSize).toBe(2);
    expect(c.stickyQueueScheduleToStartTimeout).toBe(10_000);
  });

  it('runs workflow code on the configured number of threads', () => {
    expect(workerCapacity(settings(400, 60, 200, 1)).workflowThreadPoolSize).toBe(1);
    expect(workerCapacity(settings(400, 60, 200, 4)).workflowThreadPoolSize).toBe(4);
  });

  it('never runs more workflow tasks at once than it can cache', () => {
    expect(workerCapacity(settings(50)).maxConcurrentWorkflowTaskExecutions).toBe(50);
    expect(workerCapacity(settings(1)).maxConcurrentWorkflowTaskExecutions).toBe(2);
  });

  it('keeps the configured task limit when the cache is off', () => {
    expect(workerCapacity(settings(0, 10, 30)).maxConcurrentWorkflowTaskExecutions).toBe(30);
  });
});
