import { useTestDatabase } from '../support/db';
import { useTimeSkippingApi } from '../support/temporal';
import { newAccount } from '../support/api';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { dayAfter } from '../../src/billing/dueDate';
import { workflowIds } from '../../src/temporal/workflowIds';
import { Event } from '../../src/models/event';
import { Invoice } from '../../src/models/invoice';

useTestDatabase();
const taskQueue = 'invoice-due-test';
const stack = useTimeSkippingApi(taskQueue);

async function setup(daysUntilDue: number) {
  const a = await newAccount(stack.api.url);
  const customer = (await a.api.post('/v1/customers', { email: 'due@x.io' })).body;
  const due = dayAfter(new Date(await stack.env.currentTimeMs()), daysUntilDue);
  const invoice = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: due })).body;
  return { a, invoice, handle: stack.env.client.workflow.getHandle(workflowIds.invoiceDue(invoice.id)) };
}

const statusOf = async (a: Awaited<ReturnType<typeof newAccount>>, id: string) => (await a.api.get(`/v1/invoices/${id}`)).body.status;

describe('invoice due-date workflow', () => {
  it('makes a pending invoice overdue after its due date, not before, once', async () => {
    const worker = await createTestWorker(stack.env, taskQueue);
    await worker.runUntil(async () => {
      const { a, invoice, handle } = await setup(3);
      await stack.env.sleep('3 days'); // now inside the due date's day or just before it
      expect(await statusOf(a, invoice.id)).toBe('pending');
      await stack.env.sleep('2 days');
      expect(await handle.result()).toBe('overdue');
      expect(await statusOf(a, invoice.id)).toBe('overdue');
      const events = await Event.find({ event: 'invoice.overdue', 'payload.id': invoice.id }).lean();
      expect(events).toHaveLength(1);
      expect(events[0].payload).toMatchObject({ status: 'overdue', object: 'invoice' });
      await replay(recordHistory('invoiceDue-overdue-current', await handle.fetchHistory()), 'replay-invoice-due');
      await replay(fixtureHistory('invoiceDue-overdue'), 'replay-invoice-due-kept');
    });
  });

  it('never makes a paid invoice overdue', async () => {
    const worker = await createTestWorker(stack.env, taskQueue);
    await worker.runUntil(async () => {
      const { a, invoice, handle } = await setup(2);
      await a.api.patch(`/v1/invoices/${invoice.id}`, { status: 'paid' });
      expect(await handle.result()).toBe('closed');
      await stack.env.sleep('10 days');
      expect(await statusOf(a, invoice.id)).toBe('paid');
      expect(await Event.countDocuments({ event: 'invoice.overdue', 'payload.id': invoice.id })).toBe(0);
    });
  });

  it('re-arms the timer when the due date moves', async () => {
    const worker = await createTestWorker(stack.env, taskQueue);
    await worker.runUntil(async () => {
      const { a, invoice, handle } = await setup(2);
      await a.api.patch(`/v1/invoices/${invoice.id}`, { due_date: dayAfter(new Date(await stack.env.currentTimeMs()), 10) });
      await stack.env.sleep('5 days');
      expect(await statusOf(a, invoice.id)).toBe('pending');
      await stack.env.sleep('7 days');
      expect(await handle.result()).toBe('overdue');
      expect(await statusOf(a, invoice.id)).toBe('overdue');
    });
  });

  it('waits for the stored due date when a move never reached it (its signal lost)', async () => {
    const worker = await createTestWorker(stack.env, taskQueue);
    await worker.runUntil(async () => {
      const { a, invoice, handle } = await setup(2);
      // Moved in the database only, as when the move's start intent was lost during an outage.
      const moved = dayAfter(new Date(await stack.env.currentTimeMs()), 10);
      await Invoice.updateOne({ _id: invoice.id }, { $set: { due_date: moved } });
      await stack.env.sleep('5 days');
      expect(await statusOf(a, invoice.id)).toBe('pending');
      await stack.env.sleep('7 days');
      expect(await handle.result()).toBe('overdue');
      expect(await statusOf(a, invoice.id)).toBe('overdue');
      expect(await Event.countDocuments({ event: 'invoice.overdue', 'payload.id': invoice.id, 'payload.due_date': moved })).toBe(1);
    });
  });

  it('ends when the invoice is deleted or canceled', async () => {
    const worker = await createTestWorker(stack.env, taskQueue);
    await worker.runUntil(async () => {
      const deleted = await setup(2);
      await deleted.a.api.del(`/v1/invoices/${deleted.invoice.id}`);
      expect(await deleted.handle.result()).toBe('closed');
      const canceled = await setup(2);
      await canceled.a.api.patch(`/v1/invoices/${canceled.invoice.id}`, { status: 'canceled' });
      expect(await canceled.handle.result()).toBe('closed');
    });
  });
});
