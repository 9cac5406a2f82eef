/**
 * deploy/kubernetes cannot be applied here (no cluster), so it is checked by machine: kubeconform
 * (scripts/install-tools.sh, from the Go module proxy) validates every manifest with -strict
 * against the schemas shipped in deploy/schemas (no network), and the rest of this file checks
 * what a schema cannot: probes on the routes the API serves, the grace period against the drain,
 * variables the code reads, Secrets that exist, a worker liveness probe that really answers.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES } from '../../src/config';
import { freePort, startMetricsServer } from '../../src/metrics/server';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const manifests = join(root, 'deploy', 'kubernetes');
const kubeconform = process.env.KUBECONFORM ?? join(root, '.tools', 'bin', 'kubeconform');
const KUBERNETES_VERSION = '1.33.0';
/** Only the strict schemas are shipped: a run without -strict finds none and fails. */
const SCHEMA_LOCATION = join(root, 'deploy', 'schemas', '{{ .NormalizedKubernetesVersion }}{{ .StrictSuffix }}', '{{ .ResourceKind }}{{ .KindSuffix }}.json');


interface KubeconformResult {
  code: number;
  resources: { filename: string; kind: string; name: string; status: string; msg: string }[];
  summary: { valid: number; invalid: number; errors: number; skipped: number };
}

/** kubeconform -strict on `paths`, offline, with its JSON report. */
async function validate(...paths: string[]): Promise<KubeconformResult> {
  const args = ['-strict', '-summary', '-verbose', '-output', 'json', '-kubernetes-version', KUBERNETES_VERSION, '-schema-location', SCHEMA_LOCATION, '-skip', 'Kustomization', ...paths];
  let stdout: string;
  let code = 0;
  try {
    ({ stdout } = await run(kubeconform, args, { encoding: 'utf8' }));
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    if (typeof e.code !== 'number') throw err;
    code = e.code;
    stdout = e.stdout ?? '';
  }
  const report = JSON.parse(stdout) as Omit<KubeconformResult, 'code'>;
  return { code, resources: report.resources ?? [], summary: report.summary };
}

/** A manifest as parsed: untyped YAML. */
type Manifest = Record<string, any>;

function load(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Manifest).filter((m) => m);
}

const applied = ['config.yaml', 'api.yaml', 'worker.yaml'].flatMap((f) => load(join(manifests, f)));
const secrets = load(join(manifests, 'examples', 'secrets.yaml'));
const one = (kind: string, name: string) => {
  const found = applied.filter((m) => m.kind === kind && m.metadata.name === name);
  if (found.length !== 1) throw new Error(`${found.length} ${kind} named ${name} in deploy/kubernetes`);
  return found[0];
};
const deployments = { api: one('Deployment', 'payments-api'), worker: one('Deployment', 'payments-worker') };
const containerOf = (d: Manifest) => d.spec.template.spec.containers[0];
const envOf = (d: Manifest): Record<string, any> => Object.fromEntries(containerOf(d).env.map((e: Manifest) => [e.name, e]));
const portOf = (d: Manifest, name: string): number => containerOf(d).ports.find((p: Manifest) => p.name === name).containerPort;

describe('deploy/kubernetes', () => {
  beforeAll(() => {
    if (!existsSync(kubeconform)) throw new Error(`${kubeconform} is missing: bash scripts/install-tools.sh kubeconform`);
  });

  it('is valid for Kubernetes 1.33 by kubeconform -strict against the shipped schemas, Secrets example included', async () => {
    const result = await validate(manifests);
    const failed = result.resources.filter((r) => r.status !== 'statusValid' && r.status !== 'statusSkipped');
    expect(failed).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.resources.filter((r) => r.status === 'statusValid').map((r) => `${r.kind}/${r.name}`).sort()).toEqual([
      'ConfigMap/payments-config',
      'Deployment/payments-api',
      'Deployment/payments-worker',
      'PodDisruptionBudget/payments-api',
      'PodDisruptionBudget/payments-worker',
      'Secret/payments-app',
      'Secret/payments-mongodb',
      'Secret/payments-temporal',
      'Secret/payments-temporal-tls',
      'Service/payments-api',
    ]);
    // Only the kustomization is skipped (it is kustomize's file, not a Kubernetes object).
    expect(result.resources.filter((r) => r.status === 'statusSkipped').map((r) => r.kind)).toEqual(['Kustomization']);
  });

  describe('fails on a broken manifest', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'kubeconform-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const api = readFileSync(join(manifests, 'api.yaml'), 'utf8');
    it.each([
      ['a misspelt field', api.replace('readinessProbe:', 'readynessProbe:'), /additional properties 'readynessProbe' not allowed/],
      ['a field of the wrong type', api.replace('replicas: 2', 'replicas: "2"'), /'\/spec\/replicas': got string, want (null or )?integer/],
      ['a field in the wrong place', api.replace('  template:\n    metadata:\n', '  template:\n    metadata:\n      replicas: 2\n'), /'\/spec\/template\/metadata': additional properties 'replicas' not allowed/],
      ['a kind it has no schema for', api.replace('kind: PodDisruptionBudget', 'kind: PodDisruptionBudgett'), /could not find schema for PodDisruptionBudgett/],
      ['a key given twice', api.replace('  revisionHistoryLimit: 5', '  revisionHistoryLimit: 5\n  revisionHistoryLimit: 6'), /revisionHistoryLimit.*already (set|defined)/],
    ])('%s', async (_what, broken, message) => {
      expect(broken).not.toBe(api);
      const file = join(dir, 'api.yaml');
      writeFileSync(file, broken);
      const result = await validate(file);
      expect(result.code).toBe(1);
      expect(result.resources.map((r) => r.msg).join('\n')).toMatch(message);
    });
  });

  it('lists every manifest in the kustomization, and the Secrets example is not one of them', () => {
    const [kustomization] = load(join(manifests, 'kustomization.yaml'));
    const files = readdirSync(manifests).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(kustomization.images.map((i: Manifest) => i.name)).toEqual(
      [...new Set(Object.values(deployments).map((d) => containerOf(d).image.split(':')[0]))],
    );
  });

  it('runs 2 replicas of the API and of the worker, each under a PodDisruptionBudget that keeps one', () => {
    for (const d of Object.values(deployments)) {
      expect(d.spec.replicas).toBeGreaterThanOrEqual(2);
      const labels = d.spec.template.metadata.labels;
      expect(labels).toEqual(expect.objectContaining(d.spec.selector.matchLabels));
      const budgets = applied.filter((m) => m.kind === 'PodDisruptionBudget' && Object.entries(m.spec.selector.matchLabels).every(([k, v]) => labels[k] === v));
      expect(budgets).toHaveLength(1);
      const { maxUnavailable, minAvailable } = budgets[0].spec;
      expect(maxUnavailable !== undefined ? d.spec.replicas - maxUnavailable : minAvailable).toBeGreaterThanOrEqual(1);
      // A rollout never goes below the replicas either.
      expect(d.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    }
  });

  it('probes the API on /readyz and /healthz of the port it listens on, which the Service targets', () => {
    const api = containerOf(deployments.api);
    const env = envOf(deployments.api);
    expect(portOf(deployments.api, 'http')).toBe(Number(env.PORT.value));
    expect(env.HOST.value).toBe('0.0.0.0');
    expect(api.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(api.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(api.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const service = one('Service', 'payments-api');
    expect(service.spec.selector).toEqual(deployments.api.spec.selector.matchLabels);
    expect(service.spec.ports.map((p: Manifest) => p.targetPort)).toEqual(['http']);
  });

  it('gives the API a grace period longer than its preStop sleep plus DRAIN_TIMEOUT_MS, with room to close', () => {
    const preStop = containerOf(deployments.api).lifecycle.preStop.exec.command;
    expect(preStop[0]).toBe('sleep');
    const sleepSeconds = Number(preStop[1]);
    // Long enough for the endpoints controller, kube-proxy and ingress controllers to drop the pod.
    expect(sleepSeconds).toBeGreaterThanOrEqual(5);
    const drainSeconds = Number(envOf(deployments.api).DRAIN_TIMEOUT_MS.value) / 1000;
    expect(drainSeconds).toBeGreaterThan(0);
    // Past the drain: 300 ms without a request, then closing Temporal's and the database's connections.
    expect(deployments.api.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleepSeconds + drainSeconds + 5);
  });

  it('sets only variables the code reads, and takes MongoDB, Temporal and the tokens from Secrets that the example defines', () => {
    const [config] = applied.filter((m) => m.kind === 'ConfigMap');
    for (const key of Object.keys(config.data)) expect(CONFIG_VARIABLES).toContain(key);
    const secretKeys = new Map(secrets.map((s) => [s.metadata.name, Object.keys(s.stringData ?? s.data ?? {})]));
    for (const d of Object.values(deployments)) {
      const c = containerOf(d);
      expect(c.envFrom).toEqual([{ configMapRef: { name: config.metadata.name } }]);
      const env = envOf(d);
      for (const name of Object.keys(env)) expect(CONFIG_VARIABLES).toContain(name);
      for (const name of ['MONGODB_URI', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'METRICS_TOKEN']) {
        expect(env[name].valueFrom.secretKeyRef).toEqual(expect.not.objectContaining({ optional: true }));
      }
      for (const e of Object.values(env)) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        expect(ref.key).toBe(e.name);
        expect(secretKeys.has(ref.name)).toBe(true);
        // A required key is in the example; an optional one is named in its comments at least.
        if (!ref.optional) expect(secretKeys.get(ref.name)).toContain(ref.key);
        else expect(readFileSync(join(manifests, 'examples', 'secrets.yaml'), 'utf8')).toContain(ref.key);
      }
    }
  });

  it('mounts the Temporal client certificate from its Secret where TEMPORAL_TLS_CERT, _KEY and _CA point', () => {
    const tls = secrets.find((s) => s.metadata.name === 'payments-temporal-tls')!;
    expect(tls.type).toBe('kubernetes.io/tls');
    for (const d of Object.values(deployments)) {
      const volume = d.spec.template.spec.volumes.find((v: Manifest) => v.secret?.secretName === tls.metadata.name);
      const mount = containerOf(d).volumeMounts.find((m: Manifest) => m.name === volume.name);
      expect(mount.readOnly).toBe(true);
      const env = envOf(d);
      const files = ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA'].map((name) => env[name].value as string);
      expect(files).toEqual(['tls.crt', 'tls.key', 'ca.crt'].map((f) => `${mount.mountPath}/${f}`));
      for (const f of files) expect(Object.keys(tls.stringData)).toContain(f.split('/').pop());
      // Readable by the non-root user through fsGroup, by no one else.
      expect(d.spec.template.spec.securityContext.fsGroup).toBe(d.spec.template.spec.securityContext.runAsGroup);
      expect(volume.secret.defaultMode).toBe(0o440);
    }
  });

  describe("the worker's liveness probe", () => {
    const worker = containerOf(deployments.worker);
    const env = envOf(deployments.worker);
    const token = 'a-metrics-token-of-32-characters-or-more';

    it('is its /metrics, served on HOST for the pod port, with the token required', () => {
      expect(portOf(deployments.worker, 'metrics')).toBe(Number(env.WORKER_METRICS_PORT.value));
      expect(env.HOST.value).toBe('0.0.0.0');
      expect(env.METRICS_TOKEN.valueFrom.secretKeyRef.optional).toBeUndefined();
      expect(worker.livenessProbe.exec.command).toEqual(worker.startupProbe.exec.command);
      expect(worker.livenessProbe.exec.command.slice(0, 2)).toEqual(['node', '-e']);
      expect(worker.livenessProbe.timeoutSeconds).toBeGreaterThan(8);
    });

    /** Runs the probe's command as the kubelet would, in the container's environment. */
    async function probe(port: number, probeToken: string): Promise<number> {
      const [cmd, ...args] = worker.livenessProbe.exec.command as string[];
      try {
        await run(cmd, args, { env: { PATH: process.env.PATH, WORKER_METRICS_PORT: String(port), METRICS_TOKEN: probeToken }, timeout: 15_000 });
        return 0;
      } catch (err) {
        return (err as { code: number }).code;
      }
    }

    it('passes against a worker metrics server with the token, fails with another token or nothing listening', async () => {
      const server = await startMetricsServer({ register: new Registry(), host: '0.0.0.0', port: 0, token, temporalMetricsUrl: null, logger: pino({ level: 'silent' }) });
      try {
        expect(await probe(server.port, token)).toBe(0);
        expect(await probe(server.port, `${token}-not`)).toBe(1);
      } finally {
        await server.close();
      }
      expect(await probe(await freePort('127.0.0.1'), token)).toBe(1);
    });
  });
});
