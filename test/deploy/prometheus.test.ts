/**
 * deploy/prometheus/alerts.yml, checked by machine: `promtool check rules` (Debian's prometheus
 * package, installed by scripts/lib.sh ensure_promtool) and `promtool test rules` on
 * alerts.test.yml, which feeds each rule series that fire and that stay quiet. This file also
 * checks what promtool cannot know: that the rules name metrics and label values the API and the
 * worker export, and that the sign-in alert selects the very series the real API writes.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { parse, stringify } from 'yaml';
import { createApiMetrics, LIMITERS } from '../../src/metrics/api';
import { WEBHOOK_ATTEMPT_OUTCOMES } from '../../src/metrics/worker';
import { useTestDatabase } from '../support/db';
import { startTestApi, TestApi } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { parseMetrics } from '../metrics/prom';
import { exportedMetricNames, metricNamesIn } from './promql';
import { runTool } from './tool';

const root = join(__dirname, '..', '..');
const rulesDir = join(root, 'deploy', 'prometheus');
const promtool = process.env.PROMTOOL ?? 'promtool';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
}
const rules: Rule[] = (parse(readFileSync(join(rulesDir, 'alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** promtool with `args` in `cwd`: its exit code and output together. */
async function promtoolRun(args: string[], cwd = rulesDir): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await runTool(promtool, args, cwd);
  return { code, out: stdout + stderr };
}

describe('deploy/prometheus/alerts.yml', () => {
  it('passes promtool check rules', async () => {
    const { code, out } = await promtoolRun(['check', 'rules', 'alerts.yml']);
    expect(out).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(code).toBe(0);
    expect(rules.map((r) => r.alert)).toEqual(['WebhookFailureRatioHigh', 'ChainScanLagging', 'WebhookDispatchStuck', 'SignInLockStorm']);
  });

  it('passes its unit tests (promtool test rules alerts.test.yml), with cases for every rule', async () => {
    const { code, out } = await promtoolRun(['test', 'rules', 'alerts.test.yml']);
    expect(out).toContain('SUCCESS');
    expect(code).toBe(0);
    const tests = (parse(readFileSync(join(rulesDir, 'alerts.test.yml'), 'utf8')) as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] }).tests;
    for (const { alert } of rules) {
      const cases = tests.flatMap((t) => t.alert_rule_test).filter((c) => c.alertname === alert);
      // Each rule is seen firing and seen quiet.
      expect(cases.some((c) => c.exp_alerts.length > 0)).toBe(true);
      expect(cases.some((c) => c.exp_alerts.length === 0)).toBe(true);
    }
  });

  describe('fails on a broken rule', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'promtool-'));
      copyFileSync(join(rulesDir, 'alerts.test.yml'), join(dir, 'alerts.test.yml'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const alerts = readFileSync(join(rulesDir, 'alerts.yml'), 'utf8');
    it.each([
      ['check', 'a PromQL syntax error', alerts.replace('(payments_chain_scan_lag_blocks) > 20', '(payments_chain_scan_lag_blocks) >> 20'), /ChainScanLagging|parse error|unexpected/],
      ['check', 'a duration that is not one', alerts.replace('for: 10m', 'for: ten minutes'), /not a valid duration|cannot unmarshal|time: invalid/],
      ['test', 'a threshold moved', alerts.replace('[15m])) > 0.25', '[15m])) > 0.5'), /WebhookFailureRatioHigh/],
      ['test', 'a metric misspelt', alerts.replace('max(payments_oldest_undispatched_event_age_seconds)', 'max(payments_oldest_undispatched_event_age)'), /WebhookDispatchStuck/],
      ['test', 'a `for` dropped', alerts.replace('        for: 5m\n', ''), /WebhookDispatchStuck/],
      ['test', 'the sum with a missing side left empty', alerts.replace(/ or vector\(0\)\)/g, ')'), /SignInLockStorm/],
    ])('promtool %s: %s', async (command, _what, broken, message) => {
      expect(broken).not.toBe(alerts);
      writeFileSync(join(dir, 'alerts.yml'), broken);
      const { code, out } = await promtoolRun(command === 'check' ? ['check', 'rules', 'alerts.yml'] : ['test', 'rules', 'alerts.test.yml'], dir);
      expect(code).not.toBe(0);
      expect(out).toMatch(message);
    });
  });

  it('names only metrics, and label values, that the API and the worker export', async () => {
    const exported = await exportedMetricNames();
    for (const { alert, expr } of rules) {
      const names = metricNamesIn(expr);
      expect({ alert, names: names.length > 0 }).toEqual({ alert, names: true });
      for (const name of names) expect({ alert, name, exported: exported.has(name) }).toEqual({ alert, name, exported: true });
    }
    const all = rules.map((r) => r.expr).join('\n');
    const limiters = [...all.matchAll(/limiter=~"([^"]+)"/g)].flatMap((m) => m[1].split('|'));
    expect(limiters.length).toBeGreaterThan(0);
    for (const l of limiters) expect(LIMITERS).toContain(l);
    const outcomes = [...all.matchAll(/outcome!?=~?"([^"]+)"/g)].flatMap((m) => m[1].split('|'));
    expect(outcomes.length).toBeGreaterThan(0);
    for (const o of outcomes) expect(WEBHOOK_ATTEMPT_OUTCOMES).toContain(o);
  });

  describe('SignInLockStorm against the real API', () => {
    useTestDatabase();
    const METRICS_TOKEN = 'metrics-token-for-the-alert-rule-test-0123';
    let api: TestApi;
    beforeAll(async () => {
      api = await startTestApi({ metrics: createApiMetrics(new Registry()) }, { METRICS_TOKEN });
    });
    afterAll(() => api?.close());

    it('fires on the 401 series each sign-in route writes, one route at a time', async () => {
      const wrong = { email: 'nobody@example.com', password: 'not the password' };
      for (const mount of ['/v1', '/api/v1']) {
        const res = await fetch(`${api.url}${mount}/auth`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(wrong) });
        expect(res.status).toBe(401);
      }
      expect((await consoleBrowser(api.url).signIn(wrong.email, wrong.password)).status).toBe(401);

      const res = await fetch(`${api.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      const failed = parseMetrics(await res.text()).filter((s) => s.name === 'payments_http_requests_total' && s.labels.status === '401');
      expect(failed.map((s) => `${s.labels.method} ${s.labels.route}`).sort()).toEqual(['POST /api/v1/auth', 'POST /console/sign-in', 'POST /v1/auth']);

      // One promtool test per series: that series alone, as the API labelled it, at 40 a minute.
      const selector = (labels: Record<string, string>) => `payments_http_requests_total{${Object.entries({ ...labels, instance: 'api-1' }).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
      const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
      try {
        copyFileSync(join(rulesDir, 'alerts.yml'), join(dir, 'alerts.yml'));
        const tests = failed.map((s) => ({
          interval: '1m',
          input_series: [{ series: selector(s.labels), values: '0+40x30' }],
          alert_rule_test: [{ eval_time: '15m', alertname: 'SignInLockStorm', exp_alerts: [{ exp_labels: { severity: 'warning' }, exp_annotations: { summary: '0.67 sign-ins a second refused or failed over 10m' } }] }],
        }));
        writeFileSync(join(dir, 'scraped.test.yml'), stringify({ rule_files: ['alerts.yml'], evaluation_interval: '1m', tests }));
        const { code, out } = await promtoolRun(['test', 'rules', 'scraped.test.yml'], dir);
        expect(out).toContain('SUCCESS');
        expect(code).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
