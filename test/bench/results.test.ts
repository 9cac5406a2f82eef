/**
 * bench/results.ts reads a section's figures from the lines it prints: every target line that the
 * sections write (through support.ts target() and cpu.ts cpuTarget()) becomes its figure, unit,
 * goal and status, and a result carries the run's context.
 */
import { cpuLine, cpuTarget } from '../../bench/cpu';
import { figureIn, latest, parseCpuLine, parseGoal, parseTarget, resultFileName, sectionResult, SectionResult } from '../../bench/results';
import { target } from '../../bench/support';

describe('parseTarget', () => {
  // One line of each shape the sections print (bench/*.ts), with the figure its goal is about.
  it.each([
    [target('api', 'get-throughput-vs-baseline', 'x0.52 (1899 vs 3653 req/s)', '>= x0.5', true), { value: 0.52, unit: 'x', goal: 0.5, comparison: '>=', met: true }],
    [target('api', 'last-page-vs-first-page-p50', 'x1.10 (2.1 -> 2.3 ms)', '<= x2', true), { value: 1.1, unit: 'x', goal: 2, comparison: '<=' }],
    [target('crypto', 'allocations-per-s', '54.9/s (1000/1000 allocated)', '>= 200/s, all allocated', false), { value: 54.9, unit: '/s', goal: 200, comparison: '>=', met: false, status: 'missed' }],
    [target('renewals', 'invoices-within-20s', '1000/1000 invoices in 15.4 s after the billing instant', '<= 20 s for 1000/1000 invoices', true), { value: 15.4, unit: 's', goal: 20 }],
    [target('renewals', 'invoices-within-20s', '0/1000 (subscriptions not created before the billing instant)', '<= 20 s for 1000/1000 invoices', false), { value: null, unit: 's', goal: 20 }],
    [target('renewals', 'worker-peak-rss', '846 MiB with 1000 subscriptions', '< 1024 MiB with 1000', true), { value: 846, unit: 'MiB', goal: 1024, comparison: '<' }],
    [target('webhooks', 'event-to-receipt-p50-paced', '52 ms', '< 250 ms', true), { value: 52, unit: 'ms', goal: 250 }],
    [target('webhooks', 'deliveries-per-s-burst', '1,108/s (only 900/1000 delivered)', '>= 100/s', false), { value: 1108, unit: '/s', goal: 100 }],
    [target('reports', 'mrr', 'x0.5', '<= x5 of a list page', true, false), { value: 0.5, unit: 'x', goal: 5, met: false, status: 'missed (reduced size)' }],
    [target('scale', 'get-by-id-p50-stage3-vs-1', 'x0.76 (3.06 ms -> 2.33 ms)', '<= x1.5', true), { value: 0.76, unit: 'x', goal: 1.5 }],
    [target('detection', 'threshold-to-paid', 'max 1434 ms, 5/5 rounds within 2000 ms, 201 watched addresses over 21 accounts', '<= 2000 ms every round (poll + 1 s), with 10000 watched addresses', true, false), { value: 1434, unit: 'ms', goal: 2000 }],
  ])('%s', (line, expected) => {
    expect(parseTarget(line)).toEqual(expect.objectContaining(expected));
  });

  it("reads cpu.ts's per-operation target as the ratio to a plain insert", () => {
    const cpu = { byRole: { worker: 20, ferretdb: 10 }, total: 30 };
    const line = cpuTarget('crypto', 'payment', cpu, 1000, { cpuMs: 1.5, perSecond: 700, line: '' }, 34.5 / 2, true);
    expect(parseTarget(line)).toEqual({
      section: 'crypto',
      name: 'cpu-per-payment',
      value: 20,
      unit: 'x',
      goal: 17.3,
      comparison: '<=',
      met: false,
      status: 'missed',
      valueText: 'x20.0 of a plain insert (30.00 ms)',
      goalText: '<= x17.3',
    });
  });

  it('leaves other lines alone, and keeps a goal without a figure as text', () => {
    expect(parseTarget('authenticated GET throughput / baseline: 0.52 (target >= 0.5)')).toBeNull();
    expect(parseTarget(target('x', 'y', 'all delivered', 'every event delivered', true))).toEqual(expect.objectContaining({ value: null, goal: null, unit: null, met: true, goalText: 'every event delivered' }));
  });

  it('finds the figure in the goal unit only, not in counts or other units', () => {
    expect(parseGoal('>= x0.5')).toEqual({ comparison: '>=', goal: 0.5, unit: 'x' });
    expect(parseGoal('x5 of a list page')).toBeNull();
    expect(figureIn('1000/1000 invoices in 12.3 s', 's')).toBe(12.3);
    expect(figureIn('45.2/s (12 ms)', 's')).toBeNull();
    expect(figureIn('45.2/s (12 ms)', 'ms')).toBe(12);
    expect(figureIn('box1.5 then x2.25', 'x')).toBe(2.25);
  });
});

describe('a section result', () => {
  const run = {
    date: new Date('2026-11-26T23:40:05.123Z'),
    commit: 'abc123',
    dirty: false,
    machine: { cpu: 'Test CPU', cores: 2, memoryGiB: 24, os: 'Linux 6', node: 'v20.20.2' },
    stack: { temporal: 'Temporal dev server', workers: 1, database: 'FerretDB on postgresql' },
    settings: { BENCH_CRYPTO_TRANSACTIONS: '100' },
  };
  const lines = [
    'crypto: 100 manual transactions over 100 customers (5 open invoices each)',
    cpuLine('100 payments recorded and allocated', { byRole: { worker: 1.5, api: 0.5 }, total: 2 }, 4.2),
    target('crypto', 'allocations-per-s', '30.0/s (100/100 allocated)', '>= 200/s, all allocated', false, false),
  ];

  it('holds its targets, CPU figures, size and every line printed', () => {
    const result = sectionResult('crypto', lines, 12.345, run);
    expect(result).toEqual(expect.objectContaining({ section: 'crypto', date: '2026-11-26T23:40:05.123Z', commit: 'abc123', seconds: 12.3, lines }));
    expect(result.size).toEqual({ heading: lines[0], settings: { BENCH_CRYPTO_TRANSACTIONS: '100' }, reduced: true });
    expect(result.targets.map((t) => [t.name, t.value, t.status])).toEqual([['allocations-per-s', 30, 'missed (reduced size)']]);
    expect(result.cpu).toEqual([{ what: '100 payments recorded and allocated', wallSeconds: 4.2, totalSeconds: 2, byRole: { worker: 1.5, api: 0.5 } }]);
    expect(parseCpuLine(lines[1])).toEqual(result.cpu[0]);
  });

  it("refuses another section's target", () => {
    expect(() => sectionResult('api', lines, 1, run)).toThrow(/section api printed a target of section crypto/);
  });

  it('is named by its time, and the latest is the one with the last date', () => {
    expect(resultFileName(run.date)).toBe('2026-11-26T23-40-05Z.json');
    const at = (date: string) => ({ ...sectionResult('crypto', lines, 1, { ...run, date: new Date(date) }) }) as SectionResult;
    expect(latest([at('2026-11-26T10:00:00Z'), at('2026-11-27T09:00:00Z'), at('2026-11-25T23:00:00Z')])?.date).toBe('2026-11-27T09:00:00.000Z');
    expect(latest([])).toBeUndefined();
  });
});
