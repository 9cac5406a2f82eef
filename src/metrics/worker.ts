/**
 * The worker process's domain metrics, built once at start-up on a registry of its own and
 * passed to the activities (`createActivities({ config, logger, metrics })`). The activities
 * count from what the services return, so the services stay free of metrics.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Logger } from 'pino';

/** The charge kinds a subscription bills (services/billing/invoices.ts ChargeInput). */
export const INVOICE_KINDS = ['start', 'phase_change', 'renewal'] as const;

export const ALLOCATION_OUTCOMES = ['allocated', 'already_allocated', 'missing', 'conflict', 'price_unavailable', 'error'] as const;
export type AllocationOutcomeLabel = (typeof ALLOCATION_OUTCOMES)[number];

/** success: 2xx; failure: another status, a timeout or a TLS error (retried); disabled: a connection error that disabled the endpoint. */
export const WEBHOOK_ATTEMPT_OUTCOMES = ['success', 'failure', 'disabled'] as const;
export type WebhookAttemptOutcome = (typeof WEBHOOK_ATTEMPT_OUTCOMES)[number];

export interface WorkerMetricsOptions {
  register?: Registry;
  /**
   * When the oldest event not yet dispatched was written (null: none), read at each scrape.
   * Left out, the gauge is not registered (a test's activities need no database query).
   */
  oldestUndispatchedEventAt?: () => Promise<Date | null>;
  /** Where a failed read of the above is reported. */
  logger?: Logger;
}

export function createWorkerMetrics(opts: WorkerMetricsOptions = {}) {
  const register = opts.register ?? new Registry();
  collectDefaultMetrics({ register });
  const registers = [register];
  const metrics = {
    register,
    invoicesGenerated: new Counter({
      name: 'payments_invoices_generated_total',
      help: 'Subscription invoices created, by charge kind (start, phase_change, renewal); a retry that finds its invoice does not count',
      labelNames: ['kind'] as const,
      registers,
    }),
    invoicesOverdue: new Counter({
      name: 'payments_invoices_marked_overdue_total',
      help: 'Invoices moved from pending to overdue',
      registers,
    }),
    webhookAttempts: new Counter({
      name: 'payments_webhook_delivery_attempts_total',
      help: 'Webhook requests sent, by outcome (success, failure, disabled)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    webhookEndpointsDisabled: new Counter({
      name: 'payments_webhook_endpoints_disabled_total',
      help: 'Webhook endpoints disabled after a delivery attempt, by error (connection_error, private_address, port_not_allowed)',
      labelNames: ['reason'] as const,
      registers,
    }),
    allocations: new Counter({
      name: 'payments_allocations_total',
      help: 'Automatic allocations of crypto transactions run, by outcome',
      labelNames: ['outcome'] as const,
      registers,
    }),
    chainScanLag: new Gauge({
      name: 'payments_chain_scan_lag_blocks',
      help: "Blocks between the node's tip and the chain watcher's cursor after its last scan, by currency",
      labelNames: ['currency'] as const,
      registers,
    }),
  };
  // Every outcome shows from the start at 0, so ratios and rate() work before the first of each.
  for (const outcome of WEBHOOK_ATTEMPT_OUTCOMES) metrics.webhookAttempts.inc({ outcome }, 0);
  for (const outcome of ALLOCATION_OUTCOMES) metrics.allocations.inc({ outcome }, 0);
  for (const kind of INVOICE_KINDS) metrics.invoicesGenerated.inc({ kind }, 0);

  const oldestAt = opts.oldestUndispatchedEventAt;
  if (oldestAt) {
    new Gauge({
      name: 'payments_oldest_undispatched_event_age_seconds',
      help: 'Age of the oldest event whose webhook deliveries have not been started (0: none waiting)',
      registers,
      // Read at scrape time: one indexed query, and the value is never older than the scrape.
      async collect() {
        try {
          const at = await oldestAt();
          this.set(at ? Math.max(0, (Date.now() - at.getTime()) / 1000) : 0);
        } catch (err) {
          // Unknown rather than stale or 0 (which reads as "nothing waiting").
          this.set(Number.NaN);
          opts.logger?.warn({ err }, 'metrics: reading the oldest undispatched event failed');
        }
      },
    });
  }
  return metrics;
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
