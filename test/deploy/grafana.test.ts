/**
 * deploy/grafana/*.json cannot be loaded into a Grafana here, so it is checked by machine:
 * grafana-dashboard-check (scripts/grafana-dashboard-check, built by scripts/install-tools.sh on the
 * Grafana Foundation SDK from the Go module proxy) decodes each dashboard strictly against Grafana's
 * own schema types and round-trips it; promtool (Debian's prometheus package) parses every query.
 * The rest of this file checks what a schema cannot: that every query reads metrics the API, the
 * worker and the Temporal SDK export, and the conventions of Grafana's dashboard linter rules (a
 * datasource variable, `$__rate_interval`, counters only under rate or increase, a unit, a title
 * and a description on each panel).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { exportedMetricNames, metricNamesIn } from './promql';
import { runTool } from './tool';

const root = join(__dirname, '..', '..');
const dashboardsDir = join(root, 'deploy', 'grafana');
const checker = process.env.GRAFANA_DASHBOARD_CHECK ?? join(root, '.tools', 'bin', 'grafana-dashboard-check');
const promtool = process.env.PROMTOOL ?? 'promtool';
const dashboards = readdirSync(dashboardsDir).filter((f) => f.endsWith('.json'));

interface PanelReport {
  title: string;
  type: string;
  row: string;
  unit: string;
  description: string;
  datasource: string;
  expressions: string[];
}
interface FileReport {
  file: string;
  errors: string[];
  panels: PanelReport[];
}

async function check(...files: string[]): Promise<{ code: number; reports: FileReport[] }> {
  const { code, stdout, stderr } = await runTool(checker, files);
  if (!stdout) throw new Error(`${checker} answered nothing (exit ${code}): ${stderr}`);
  return { code, reports: JSON.parse(stdout) };
}

/** The dashboard's template variables, as Grafana substitutes them, for a query Prometheus can parse. */
const asPromQL = (expr: string) => expr.replace(/\$__rate_interval/g, '5m').replace(/\$\{?(\w+)\}?/g, '.+');

describe('deploy/grafana', () => {
  let reports: FileReport[];
  beforeAll(async () => {
    if (!existsSync(checker)) throw new Error(`${checker} is missing: bash scripts/install-tools.sh grafana-dashboard-check`);
    const result = await check(...dashboards.map((f) => join(dashboardsDir, f)));
    expect(result.reports.flatMap((r) => r.errors)).toEqual([]);
    expect(result.code).toBe(0);
    reports = result.reports;
  });

  it('holds the service dashboard, with rows for the API, the domain, the worker and the processes', () => {
    expect(dashboards).toEqual(['payments.json']);
    const panels = reports[0].panels;
    expect(panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual(['API', 'Payments and webhooks', 'Worker (Temporal SDK)', 'Processes']);
    const rowOf = (row: string) => panels.filter((p) => p.row === row).flatMap((p) => p.expressions).join('\n');
    // What the issue asks of it: the API by route, the worker's workflow and activity tasks, the domain.
    expect(rowOf('API')).toMatch(/sum by \(route\) \(rate\(payments_http_requests_total/);
    expect(rowOf('API')).toMatch(/sum by \(route, status\) \(rate\(payments_http_requests_total\{[^}]*status=~"5\.\."/);
    expect(rowOf('API')).toMatch(/histogram_quantile\(0\.99, sum by \(le, route\) \(rate\(payments_http_request_duration_seconds_bucket/);
    for (const name of ['temporal_workflow_task_schedule_to_start_latency_bucket', 'temporal_workflow_task_execution_latency_bucket', 'temporal_activity_execution_latency_bucket', 'temporal_activity_execution_failed']) {
      expect(rowOf('Worker (Temporal SDK)')).toContain(name);
    }
    for (const name of ['payments_allocations_total', 'payments_webhook_delivery_attempts_total', 'payments_webhook_endpoints_disabled_total', 'payments_chain_scan_lag_blocks', 'payments_oldest_undispatched_event_age_seconds', 'payments_invoices_generated_total', 'payments_rate_limit_rejections_total']) {
      expect(rowOf('Payments and webhooks')).toContain(name);
    }
  });

  describe('the schema check fails on a broken dashboard', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'grafana-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const text = readFileSync(join(dashboardsDir, 'payments.json'), 'utf8');
    it.each([
      ['a misspelt panel field', text.replace('"description": "Requests the API answered', '"descripton": "Requests the API answered'), /descripton/],
      ['a field of the wrong type', text.replace(/"gridPos": \{\n(\s+)"h": 8,/, '"gridPos": {\n$1"h": "8",'), /gridPos|cannot unmarshal/],
      ['a panel type Grafana does not have', text.replace('"type": "timeseries"', '"type": "timeseriess"'), /panel type "timeseriess"/],
      ['a query field misspelt', text.replace('"legendFormat": "{{route}}"', '"legendFormt": "{{route}}"'), /legendFormt/],
      ['a query without its expression', text.replace(/"expr": "sum by \(route\) \(rate\(payments_http_requests_total(?:[^"\\]|\\.)*",\n\s*/, ''), /expr/],
      ['a required field missing', text.replace(/"type": "row",\n\s*/, ''), /type/],
    ])('%s', async (_what, broken, message) => {
      expect(broken).not.toBe(text);
      const file = join(dir, 'payments.json');
      writeFileSync(file, broken);
      const { code, reports: [report] } = await check(file);
      expect(code).toBe(1);
      expect(report.errors.join('\n')).toMatch(message);
    });
  });

  it('reads only metrics that the API, the worker and the Temporal SDK export', async () => {
    const exported = await exportedMetricNames();
    const dashboard = JSON.parse(readFileSync(join(dashboardsDir, 'payments.json'), 'utf8'));
    const variableQueries: string[] = dashboard.templating.list.filter((v: { type: string }) => v.type === 'query').map((v: { query: string }) => v.query);
    expect(variableQueries.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const q of variableQueries) {
      const m = /^label_values\((\w+), *\w+\)$/.exec(q);
      expect(m).not.toBeNull();
      if (!exported.has(m![1])) missing.push(`variable: ${m![1]}`);
    }
    for (const p of reports[0].panels) {
      for (const expr of p.expressions) {
        const names = metricNamesIn(expr);
        expect({ panel: p.title, names: names.length > 0 }).toEqual({ panel: p.title, names: true });
        for (const n of names) if (!exported.has(n)) missing.push(`${p.title}: ${n}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('holds only queries Prometheus parses (promtool check rules, one recording rule per query)', async () => {
    const queries = reports[0].panels.flatMap((p) => p.expressions);
    expect(queries.length).toBeGreaterThan(20);
    const dir = mkdtempSync(join(tmpdir(), 'grafana-promql-'));
    try {
      const rules = queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: asPromQL(q) }));
      writeFileSync(join(dir, 'queries.yml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
      const { code, stdout, stderr } = await runTool(promtool, ['check', 'rules', 'queries.yml'], dir);
      const out = stdout + stderr;
      expect(out).toContain(`SUCCESS: ${queries.length} rules found`);
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps the conventions of Grafana's dashboard linter", () => {
    const dashboard = JSON.parse(readFileSync(join(dashboardsDir, 'payments.json'), 'utf8'));
    const variables = dashboard.templating.list as { type: string; name: string; query: string; datasource?: { uid: string } }[];
    // A datasource variable of Prometheus, used by every panel, query and query variable.
    expect(variables.filter((v) => v.type === 'datasource')).toEqual([expect.objectContaining({ name: 'datasource', query: 'prometheus' })]);
    for (const v of variables.filter((x) => x.type === 'query')) expect(v.datasource?.uid).toBe('${datasource}');
    const problems: string[] = [];
    for (const p of reports[0].panels.filter((x) => x.type !== 'row')) {
      if (p.datasource !== '${datasource}') problems.push(`${p.title}: datasource ${p.datasource}`);
      if (!p.title || !p.description) problems.push(`${p.title}: a title and a description`);
      if (!p.unit) problems.push(`${p.title}: no unit`);
      for (const expr of p.expressions) {
        // Windows follow the scrape interval Grafana knows of.
        for (const w of expr.matchAll(/\[([^\]]+)\]/g)) if (w[1] !== '$__rate_interval') problems.push(`${p.title}: window [${w[1]}]`);
        // A counter is read through rate() or increase(), never as a raw value.
        for (const c of expr.matchAll(/\b(\w+_total|temporal_(?:workflow_completed|workflow_failed|workflow_task_execution_failed|activity_execution_failed|local_activity_execution_failed))\b/g)) {
          if (!/\b(rate|increase)\($/.test(expr.slice(0, c.index))) problems.push(`${p.title}: counter ${c[1]} outside rate()/increase()`);
        }
        // The API's and the worker's series only (the job variables).
        if (/payments_|process_|nodejs_|temporal_/.test(expr) && !/job=~"\$(api_job|worker_job)/.test(expr)) problems.push(`${p.title}: not filtered by job`);
      }
    }
    expect(problems).toEqual([]);
  });
});
