/**
 * A strict reader of the Prometheus text format for the metrics tests: every line must be a
 * comment or a sample, and a metric family may be declared once (Prometheus rejects a scrape
 * that declares one twice, which a careless merge of two exporters would do).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function number(raw: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  // Prometheus parses values with Go's ParseFloat: NaN in any case (prom-client writes `Nan`).
  if (raw.toLowerCase() === 'nan') return NaN;
  const n = Number(raw);
  if (Number.isNaN(n)) throw new Error(`not a sample value: ${raw}`);
  return n;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  const declared = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      if (declared.has(type[1])) throw new Error(`metric ${type[1]} declared twice`);
      declared.add(type[1]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1], labels, value: number(m[3]) });
  }
  return samples;
}

/** Samples of `name` carrying at least `labels`. */
export function samplesOf(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of `name` with these labels; undefined when there is none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samplesOf(samples, name, labels);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** `token`: METRICS_TOKEN, sent as `Authorization: Bearer <token>`. */
export async function scrape(url: string, token?: string): Promise<{ status: number; contentType: string | null; text: string; samples: Sample[] }> {
  const res = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), text, samples: res.ok ? parseMetrics(text) : [] };
}
