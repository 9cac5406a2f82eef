/**
 * For the checks of deploy/prometheus and deploy/grafana: the metric names a PromQL expression
 * reads, and every name the API and the worker export (their registries, built as the processes
 * build them, and the Temporal SDK's own metrics, read from the SDK's sources in node_modules).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Registry } from 'prom-client';
import { createApiMetrics } from '../../src/metrics/api';
import { createWorkerMetrics } from '../../src/metrics/worker';

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names `expr` selects: identifiers outside strings, matchers, ranges and label lists that are not functions or keywords. */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    if (bare.slice(m.index + m[0].length).trimStart().startsWith('(')) continue;
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** The series names of a metric family of `type` named `name`, as Prometheus stores them. */
function seriesNames(name: string, type: string): string[] {
  if (type === 'histogram') return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === 'summary') return [name, `${name}_sum`, `${name}_count`];
  return [name];
}

/**
 * The Temporal SDK's worker metrics, as its Prometheus exporter names them (`temporal_` and the
 * name; its histograms, in milliseconds, are the `*_latency` ones). Read from the sdk-core sources
 * that @temporalio/core-bridge ships, so an SDK upgrade that renames one fails the check.
 */
export function temporalSdkMetricNames(): string[] {
  const core = join(dirname(require.resolve('@temporalio/core-bridge/package.json')), 'sdk-core', 'crates');
  const names = new Set<string>();
  for (const file of ['sdk-core/src/telemetry/metrics.rs', 'common/src/telemetry/metrics.rs']) {
    // The unit tests at the end of a file name metrics of their own.
    const source = readFileSync(join(core, file), 'utf8').split(/^#\[cfg\(test\)\]\nmod tests \{/m)[0];
    for (const m of source.matchAll(/(?:\bname: |_NAME: &str =\s*)"([a-z_]+)"/g)) names.add(m[1]);
  }
  return [...names].flatMap((n) => seriesNames(`temporal_${n}`, n.endsWith('_latency') ? 'histogram' : 'counter'));
}

/** Every series name the API's and the worker's /metrics can show. */
export async function exportedMetricNames(): Promise<Set<string>> {
  const api = createApiMetrics(new Registry());
  const worker = createWorkerMetrics({ register: new Registry(), oldestUndispatchedEventAt: async () => null });
  const names = new Set<string>(temporalSdkMetricNames());
  for (const register of [api.register, worker.register]) {
    for (const m of await register.getMetricsAsJSON()) for (const n of seriesNames(m.name, String(m.type))) names.add(n);
  }
  return names;
}
