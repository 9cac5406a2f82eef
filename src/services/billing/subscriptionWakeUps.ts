/**
 * One wake-up of a subscription's workflow (its `renewSubscription` activity): the invoice of each
 * charge due, in order, then status and phase as of `now`, from one read of the subscription,
 * with every event of the wake-up in one write. Each step is idempotent (invoices and events are
 * keyed), so a retry redoes only what is missing.
 */
import { scopeOfDoc } from '../../models/scope';
import type { InvoiceDoc } from '../../models/invoice';
import type { Dependencies } from '../../dependencies';
import { EventToRecord, recordEvents } from '../writes/events';
import type { ChargeInput } from '../../billing/schedule';
import { writeSubscriptionInvoice } from './invoices';
import { readSubscription, subscriptionStateChange, writeSubscriptionState } from './subscriptions';

export interface WakeUpOutcome {
  /** The subscription's status after the wake-up ('deleted' once gone). */
  status: string;
  /** The kind of each invoice this wake-up wrote (not those a retry found). */
  created: ChargeInput['kind'][];
}

export async function wakeUpSubscription(deps: Dependencies, subscriptionId: string, charges: readonly ChargeInput[], nowIso: string): Promise<WakeUpOutcome> {
  const stored = await readSubscription(subscriptionId);
  if (!stored) return { status: 'deleted', created: [] };
  const now = new Date(nowIso);
  const events: EventToRecord[] = [];
  const invoices: InvoiceDoc[] = [];
  const created: ChargeInput['kind'][] = [];
  for (const charge of charges) {
    const written = await writeSubscriptionInvoice(deps, subscriptionId, charge, deps.config.invoiceDueDays, stored);
    if (!written) continue;
    invoices.push(written.invoice);
    events.push(...written.events);
    if (written.created) created.push(charge.kind);
  }
  // Its invoices do not change the subscription: the state moves from the same read.
  const change = subscriptionStateChange(stored, now);
  // Before the state write (see syncSubscriptionState): in order, invoices first.
  await recordEvents(scopeOfDoc(stored), [...events, ...(change?.events ?? [])]);
  for (const invoice of invoices) if (invoice.status === 'pending') await deps.workflows.invoiceDue.watch(invoice);
  const status = change ? await writeSubscriptionState(stored, now, change.writtenAt) : stored.status;
  return { status, created };
}
