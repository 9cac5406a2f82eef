import { AGING_LABELS, ageInvoices, OpenInvoice } from '../../src/billing/receivables';

const inv = (id: string, due_date: string, total_amount = '10.00', amount_paid = '0.00'): OpenInvoice => ({ id, customer_id: 'cus_1', status: 'open', due_date, total_amount, amount_paid });
const ids = (invoices: OpenInvoice[]) => ageInvoices(invoices, '2026-03-01').buckets.map((b) => b.invoices.map((i) => i.id).join(' ')).join(' | ');

describe('ageInvoices order and fields', () => {
  it('lists oldest due date first within a bucket, then by id, whatever the input order', () => {
    const all = [inv('b', '2026-02-20'), inv('a', '2026-02-20'), inv('c', '2026-02-10'), inv('d', '2026-02-25'), inv('e', '2026-03-05'), inv('f', '2026-03-02')];
    expect(ids(all)).toBe('f e | c a b d |  |  | ');
    expect(ids([...all].reverse())).toBe(ids(all));
    for (let i = 0; i < all.length; i++) expect(ids([...all.slice(i), ...all.slice(0, i)])).toBe(ids(all));
  });

  it('gives days past due (never negative) and the balance still owed', () => {
    const r = ageInvoices([inv('a', '2026-03-11', '10.00', '2.50'), inv('b', '2026-02-19', '7.00', '')], '2026-03-01');
    const all = r.buckets.flatMap((b) => b.invoices);
    expect(all.map((i) => [i.id, i.days_past_due, i.balance, i.bucket])).toEqual([
      ['a', 0, '7.50', 'current'],
      ['b', 10, '7.00', '1_30'],
    ]);
  });

  it('labels its buckets', () => {
    expect(AGING_LABELS).toEqual({ current: 'Current', '1_30': '1–30 days', '31_60': '31–60 days', '61_90': '61–90 days', over_90: 'Over 90 days' });
  });
});
