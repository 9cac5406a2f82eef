/**
 * recordEvent with a webhook dispatcher registered (real database): an event nobody receives is
 * written already dispatched and handed to no one; one with recipients is written undispatched
 * and handed over with them; a failed lookup leaves it to dispatch (and the sweeper) as before.
 */
import { useTestDatabase } from '../../support/db';
import { Event, EventDoc } from '../../../src/models/event';
import { EventDispatcher, onEventRecorded, recordEvent, RecordedEvent, recordEvents } from '../../../src/services/writes/events';
import type { WebhookEndpointDoc } from '../../../src/models/webhookEndpoint';
import { newId, ID_PREFIX } from '../../../src/lib/ids';
import { waitFor } from '../../support/wait';

useTestDatabase();

const scope = () => ({ accountId: newId(ID_PREFIX.account), sandbox: null });
const endpoint = { _id: 'we_test', enabled: true } as unknown as WebhookEndpointDoc;

function recordingDispatcher(recipientsOf: EventDispatcher['recipientsOf']) {
  const handed: { event: RecordedEvent; recipients: WebhookEndpointDoc[] | null }[] = [];
  const dispatcher: EventDispatcher = {
    recipientsOf,
    dispatch: async (event, recipients) => {
      handed.push({ event, recipients });
    },
  };
  return { dispatcher, handed };
}

/**
 * The positive signal before asserting that an event was handed to no one: a later event with a
 * recipient is handed over (each event's hand-over is queued as it is recorded, so the earlier
 * ones' have run by then). Its own hand-over to the dispatchers under test is filtered out.
 */
async function laterEventHandedOver(): Promise<string> {
  const { dispatcher, handed } = recordingDispatcher(async (e) => (e.payload.id === 'cus_marker' ? [endpoint] : []));
  const off = onEventRecorded(dispatcher);
  try {
    const marker = await recordEvent(scope(), 'customer.created', { id: 'cus_marker', object: 'customer' });
    await waitFor(() => handed.some((h) => h.event.id === marker.id), 'the later event handed over');
    return marker.id;
  } finally {
    off();
  }
}
const stored = (id: string) => Event.findById(id).lean<EventDoc>();

describe('recordEvent', () => {
  it('stores the event as the schema describes it: undispatched without a dispatcher, undefined payload fields left out', async () => {
    const s = scope();
    const ev = await recordEvent(s, 'customer.updated', { id: 'cus_u', object: 'customer', last_name: undefined, address: { line2: undefined, city: 'Oslo' }, tags: [] });
    const raw = await Event.collection.findOne({ _id: ev.id } as never);
    expect(raw).toEqual({
      _id: ev.id,
      account_id: s.accountId,
      sandbox: null,
      event: 'customer.updated',
      payload: { id: 'cus_u', object: 'customer', address: { city: 'Oslo' }, tags: [] },
      timestamp: ev.timestamp,
      dispatched: false,
      dispatched_at: null,
    });
    // The same idempotency key writes once.
    const once = await recordEvent(s, 'customer.updated', { id: 'cus_u', object: 'customer' }, { idempotencyKey: `k-${ev.id}` });
    await recordEvent(s, 'customer.updated', { id: 'cus_u', object: 'customer' }, { idempotencyKey: `k-${ev.id}` });
    expect(await Event.countDocuments({ _id: once.id })).toBe(1);
  });

  it('writes an event nobody receives as dispatched, and hands it to no one', async () => {
    const { dispatcher, handed } = recordingDispatcher(async () => []);
    const off = onEventRecorded(dispatcher);
    try {
      const ev = await recordEvent(scope(), 'customer.created', { id: 'cus_1', object: 'customer' });
      const marker = await laterEventHandedOver();
      const doc = await stored(ev.id);
      expect(doc?.dispatched).toBe(true);
      expect(doc?.dispatched_at).toBeInstanceOf(Date);
      expect(handed.filter((h) => h.event.id !== marker)).toHaveLength(0);
    } finally {
      off();
    }
  });

  it('writes an event with recipients undispatched and hands it over with them', async () => {
    const { dispatcher, handed } = recordingDispatcher(async () => [endpoint]);
    const off = onEventRecorded(dispatcher);
    try {
      const ev = await recordEvent(scope(), 'customer.created', { id: 'cus_2', object: 'customer' });
      await waitFor(() => handed.length > 0, 'the hand-over');
      expect((await stored(ev.id))?.dispatched).toBe(false);
      expect(handed).toEqual([{ event: expect.objectContaining({ id: ev.id }), recipients: [endpoint] }]);
    } finally {
      off();
    }
  });

  it('leaves the event undispatched when the lookup fails, and lets dispatch look again', async () => {
    const { dispatcher, handed } = recordingDispatcher(async () => {
      throw new Error('database busy');
    });
    const off = onEventRecorded(dispatcher);
    try {
      const ev = await recordEvent(scope(), 'customer.created', { id: 'cus_3', object: 'customer' });
      await waitFor(() => handed.length > 0, 'the hand-over');
      expect((await stored(ev.id))?.dispatched).toBe(false);
      expect(handed).toEqual([{ event: expect.objectContaining({ id: ev.id }), recipients: null }]);
    } finally {
      off();
    }
  });

  it('writes undispatched without a dispatcher (a process without Temporal): the sweeper finds it', async () => {
    const ev = await recordEvent(scope(), 'customer.created', { id: 'cus_4', object: 'customer' });
    expect((await stored(ev.id))?.dispatched).toBe(false);
  });

  it('writes a keyed event once and hands the second call to no one', async () => {
    const { dispatcher, handed } = recordingDispatcher(async () => [endpoint]);
    const off = onEventRecorded(dispatcher);
    try {
      const s = scope();
      const first = await recordEvent(s, 'customer.created', { id: 'cus_5', object: 'customer' }, { idempotencyKey: `k-${s.accountId}` });
      const second = await recordEvent(s, 'customer.created', { id: 'cus_5', object: 'customer' }, { idempotencyKey: `k-${s.accountId}` });
      const marker = await laterEventHandedOver();
      expect(second.id).toBe(first.id);
      expect(handed.filter((h) => h.event.id !== marker)).toHaveLength(1);
      expect(await Event.countDocuments({ account_id: s.accountId })).toBe(1);
    } finally {
      off();
    }
  });
});

describe('recordEvents', () => {
  it('writes a batch in one go, in order; a keyed event already written is skipped alone and handed over once', async () => {
    const { dispatcher, handed } = recordingDispatcher(async () => [endpoint]);
    const off = onEventRecorded(dispatcher);
    try {
      const s = scope();
      const earlier = await recordEvent(s, 'invoice.paid', { id: 'in_1', object: 'invoice' }, { idempotencyKey: `paid-${s.accountId}` });
      const batch = await recordEvents(s, [
        { event: 'transaction_allocation.created', payload: { id: 'ta_1', object: 'transaction_allocation' }, idempotencyKey: `created-${s.accountId}` },
        { event: 'invoice.paid', payload: { id: 'in_1', object: 'invoice' }, idempotencyKey: `paid-${s.accountId}` },
        { event: 'crypto_transaction.allocated', payload: { id: 'ctx_1', object: 'crypto_transaction' }, idempotencyKey: `allocated-${s.accountId}` },
      ]);
      expect(batch.map((e) => e.event)).toEqual(['transaction_allocation.created', 'invoice.paid', 'crypto_transaction.allocated']);
      expect(batch[1].id).toBe(earlier.id);
      const marker = await laterEventHandedOver();
      const ids = handed.filter((h) => h.event.id !== marker).map((h) => h.event.id);
      expect(ids.sort()).toEqual([earlier.id, batch[0].id, batch[2].id].sort());
      // Stored in order, as readers order events: by time, then id.
      const kept = await Event.find({ account_id: s.accountId }).sort({ timestamp: 1, _id: 1 }).lean<EventDoc[]>();
      expect(kept.map((e) => e.event)).toEqual(['invoice.paid', 'transaction_allocation.created', 'crypto_transaction.allocated']);
    } finally {
      off();
    }
  });

  it('writes a batch whose events all exist already as nothing, and hands none over', async () => {
    const { dispatcher, handed } = recordingDispatcher(async () => [endpoint]);
    const s = scope();
    const events = [
      { event: 'transaction_allocation.created' as const, payload: { id: 'ta_2', object: 'transaction_allocation' }, idempotencyKey: `c2-${s.accountId}` },
      { event: 'crypto_transaction.allocated' as const, payload: { id: 'ctx_2', object: 'crypto_transaction' }, idempotencyKey: `a2-${s.accountId}` },
    ];
    await recordEvents(s, events);
    const off = onEventRecorded(dispatcher);
    try {
      await recordEvents(s, events);
      const marker = await laterEventHandedOver();
      expect(handed.filter((h) => h.event.id !== marker)).toHaveLength(0);
      expect(await Event.countDocuments({ account_id: s.accountId })).toBe(2);
    } finally {
      off();
    }
  });
});
