/**
 * Invoices paid before every move to `paid` wrote `paid_at` and its month key (2026-11-28) get
 * both once, so that what reads paid invoices by month (a payment claim link's view of what was
 * paid since it was made) finds them. When they became paid is read from the invoice and its
 * `invoice.paid` events still kept (billing/paidAt.ts); `updated_at` is kept, as nothing about the
 * invoice changed.
 */
import { Invoice, InvoiceDoc, paidMarks } from '../../models/invoice';
import { Event } from '../../models/event';
import type { Dependencies } from '../../dependencies';
import { paidAtOf } from '../../billing/paidAt';
import { cryptoAllocationsOf, writeInvoiceHeld } from './invoiceWrites';
import { MigrationRun, runMigration } from '../writes/migrations';

export const PAID_AT_MIGRATION = 'invoices.paid_at';

/**
 * Backfills `paid_at` (once per database): the number of invoices it wrote. `stop` cuts a run
 * short (the process is stopping); it is then not recorded, and the next start finishes it.
 */
export function backfillInvoicePaidAt(deps: Dependencies, stop?: AbortSignal): Promise<number> {
  return runMigration(PAID_AT_MIGRATION, () => markPaidInvoices(deps, stop));
}

async function markPaidInvoices(deps: Dependencies, stop?: AbortSignal): Promise<MigrationRun> {
  // `status` is pushed down; whether the key is there is checked here (an `$exists` would not be).
  const paid = (await Invoice.collection.find({ status: 'paid' } as never, { projection: { _id: 1, paid_month_key: 1 } }).toArray()) as unknown as Pick<InvoiceDoc, '_id' | 'paid_month_key'>[];
  let changed = 0;
  let finished = true;
  for (const { _id } of paid.filter((i) => i.paid_month_key == null)) {
    if (stop?.aborted) return { changed, finished: false };
    // A change after a payment by hand moved `updated_at`; the event still says when it was paid.
    const paidEvents = (await Event.collection.find({ 'payload.id': _id, event: 'invoice.paid' } as never, { projection: { timestamp: 1 } }).toArray()).map((e) => e.timestamp as Date);
    const held = await writeInvoiceHeld(deps, _id, (invoice) =>
      invoice.status === 'paid' && invoice.paid_month_key == null
        ? { ...paidMarks(invoice.customer_id, paidAtOf({ crypto_allocations: cryptoAllocationsOf(invoice), updated_at: invoice.updated_at, paid_events: paidEvents })), updated_at: invoice.updated_at }
        : null,
    );
    if (held.result === 'written') changed += 1;
    if (held.result === 'busy') finished = false;
  }
  return { changed, finished };
}
