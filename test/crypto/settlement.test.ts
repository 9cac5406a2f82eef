/** What settles an invoice when payments pay the oldest open invoice first (pure). */
import { settlementOf } from '../../src/cryptocurrency/settlement';

const inv = (id: string, due_date: string, balance: string, created_at = '2030-01-01T00:00:00.000Z') => ({ id, due_date, balance, created_at });

describe('settlementOf', () => {
  it('asks for the balance alone when no older invoice is open', () => {
    const target = inv('b', '2031-02-01', '120.50');
    expect(settlementOf([inv('c', '2031-03-01', '10.00'), target], target)).toEqual({ earlier: [], amount: '120.50' });
  });

  it('adds the balances of the open invoices allocation pays first: older due date, then older creation, then id', () => {
    const target = inv('m', '2031-02-01', '100.00', '2030-01-02T00:00:00.000Z');
    const older = inv('z', '2031-01-01', '30.00');
    const sameDayEarlier = inv('x', '2031-02-01', '5.25', '2030-01-01T00:00:00.000Z');
    const sameDayLater = inv('a', '2031-02-01', '7.00', '2030-01-03T00:00:00.000Z');
    const later = inv('q', '2031-03-01', '1.00');
    const { earlier, amount } = settlementOf([later, sameDayLater, target, sameDayEarlier, older], target);
    expect(earlier.map((i) => i.id)).toEqual(['z', 'x']);
    expect(amount).toBe('135.25');
  });

  it('passes over invoices with nothing due, and asks nothing for an invoice with nothing due', () => {
    const target = inv('b', '2031-02-01', '50.00');
    expect(settlementOf([inv('a', '2031-01-01', '0.00'), target], target)).toEqual({ earlier: [], amount: '50.00' });
    const settled = inv('s', '2031-02-01', '0.00');
    expect(settlementOf([inv('a', '2031-01-01', '9.00'), settled], settled)).toEqual({ earlier: [], amount: '0.00' });
  });
});
