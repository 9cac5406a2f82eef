import { paidAtOf } from '../../src/billing/paidAt';

const at = (s: string) => new Date(s);

describe('paidAtOf: when an invoice written before paid_at became paid', () => {
  it('is the crypto allocation that paid it in full, not a partial one or its last update', () => {
    const paidAt = paidAtOf({
      updated_at: at('2026-10-20T00:00:00Z'),
      crypto_allocations: [
        { pays_in_full: false, created_at: at('2026-10-01T00:00:00Z') },
        { pays_in_full: true, created_at: at('2026-10-05T12:00:00Z') },
      ],
    });
    expect(paidAt.toISOString()).toBe('2026-10-05T12:00:00.000Z');
  });

  it('is the latest allocation in full where it was paid, reopened and paid again', () => {
    const paidAt = paidAtOf({
      updated_at: '2026-10-20T00:00:00Z',
      crypto_allocations: [
        { pays_in_full: true, created_at: '2026-09-01T00:00:00Z' },
        { pays_in_full: true, created_at: '2026-10-02T00:00:00Z' },
        { pays_in_full: false, created_at: '2026-10-03T00:00:00Z' },
      ],
    });
    expect(paidAt.toISOString()).toBe('2026-10-02T00:00:00.000Z');
  });

  it('is its last update when no allocation paid it in full (marked paid by hand)', () => {
    expect(paidAtOf({ updated_at: at('2026-10-20T08:00:00Z'), crypto_allocations: [{ pays_in_full: false, created_at: at('2026-10-01T00:00:00Z') }] }).toISOString()).toBe('2026-10-20T08:00:00.000Z');
    expect(paidAtOf({ updated_at: '2026-10-21T00:00:00Z' }).toISOString()).toBe('2026-10-21T00:00:00.000Z');
    expect(paidAtOf({ updated_at: '2026-10-22T00:00:00Z', crypto_allocations: null }).toISOString()).toBe('2026-10-22T00:00:00.000Z');
  });

  it('is its latest invoice.paid event when one is kept, though the invoice changed after it', () => {
    const paidAt = paidAtOf({ updated_at: '2026-10-20T00:00:00Z', paid_events: ['2026-10-02T09:00:00Z', at('2026-10-12T10:00:00Z')] });
    expect(paidAt.toISOString()).toBe('2026-10-12T10:00:00.000Z');
    expect(paidAtOf({ updated_at: '2026-10-20T00:00:00Z', paid_events: [] }).toISOString()).toBe('2026-10-20T00:00:00.000Z');
  });

  it('is the later of an allocation in full and an invoice.paid event (paid by crypto, reopened, marked paid by hand)', () => {
    const paidAt = paidAtOf({
      updated_at: '2026-10-20T00:00:00Z',
      crypto_allocations: [{ pays_in_full: true, created_at: '2026-10-01T00:00:00Z' }],
      paid_events: ['2026-10-01T00:00:00.004Z', '2026-10-15T00:00:00Z'],
    });
    expect(paidAt.toISOString()).toBe('2026-10-15T00:00:00.000Z');
  });
});
