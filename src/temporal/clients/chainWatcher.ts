/** The chain watcher workflow (`chainWatcherWorkflow`), one per watched currency, started by type name. */
import type { TemporalContext } from '../context';
import { workflowIds } from '../workflowIds';
import type { ChainWatcherInput } from '../cryptoDefinitions';
import { startOnce } from '../startOnce';

export interface ChainWatcherWorkflows {
  /** Starts the currency's watcher; one already running is left alone. */
  ensure(currency: ChainWatcherInput['currency']): Promise<void>;
}

export function chainWatcherWorkflows(temporal: TemporalContext): ChainWatcherWorkflows {
  return {
    ensure: async (currency) => {
      const args: [ChainWatcherInput] = [{ currency, cursor: null }];
      await startOnce(() => temporal.client.workflow.start('chainWatcherWorkflow', { workflowId: workflowIds.chainWatcher(currency), taskQueue: temporal.taskQueue, args }));
    },
  };
}
