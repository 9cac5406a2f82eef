import { collectionsRollup, receivablesRollup } from '../../src/billing/rollups';

const d = (s: string) => new Date(s);

describe('receivablesRollup', () => {
  it('sums per (due date, creation day), in that order, whatever the input order', () => {
    const inv = (id: string, due_date: string, created: string, total_amount: string, amount_paid = '0.00') => ({
      id, customer_id: 'c', status: 'open', due_date, total_amount, amount_paid, created_at: d(created),
    });
    const invoices = [
      inv('1', '2026-02-01', '2026-01-20T10:00:00Z', '10.00'),
      inv('2', '2026-01-15', '2026-01-02T10:00:00Z', '5.00', '1.00'),
      inv('3', '2026-02-01', '2026-01-10T10:00:00Z', '3.333'),
      inv('4', '2026-02-01', '2026-01-20T23:00:00Z', '2.00', ''),
    ];
    const expected = [
      { due_date: '2026-01-15', created_day: '2026-01-02', count: 1, balance: '4' },
      { due_date: '2026-02-01', created_day: '2026-01-10', count: 1, balance: '3.33' },
      { due_date: '2026-02-01', created_day: '2026-01-20', count: 2, balance: '12' },
    ];
    expect(receivablesRollup(invoices)).toEqual(expected);
    expect(receivablesRollup([...invoices].reverse())).toEqual(expected);
    expect(receivablesRollup([invoices[2], invoices[0], invoices[1], invoices[3]])).toEqual(expected);
  });
});

describe('collectionsRollup', () => {
  it('leaves out months without a row (an invoice marked paid after a partial crypto payment)', () => {
    const rollup = collectionsRollup([], [{ paid_at: d('2026-03-05T00:00:00Z'), total_amount: '10.00', amount_paid: '4.00' }]);
    expect(rollup.months).toEqual([]);
    const withRow = collectionsRollup([], [{ paid_at: d('2026-03-05T00:00:00Z'), total_amount: '10.00', amount_paid: '0.00' }]);
    expect(withRow.months.map((m) => m.month)).toEqual(['2026-03']);
  });
});
