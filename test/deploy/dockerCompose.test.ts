/** docker-compose.yml cannot run here (no Docker engine), but the Docker tooling must parse it. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_VARIABLES } from '../../src/config';

const root = join(__dirname, '..', '..');

function composeConfig(): string {
  const file = join(root, 'docker-compose.yml');
  try {
    return execFileSync('docker', ['compose', '-f', file, 'config'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return execFileSync('docker-compose', ['-f', file, 'config'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }
}

/** Seconds of a compose duration (`20s`, `1m30s`, `1m`). */
function seconds(duration: string): number {
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  expect(parts.map((p) => p[0]).join('')).toBe(duration);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * { h: 3600, m: 60, s: 1, ms: 0.001 }[unit as 'h' | 'm' | 's' | 'ms'], 0);
}

/** A service's networks, in either form the tooling prints (a list, or a map of name to options). */
function networksOf(def: { networks?: string[] | Record<string, unknown> }): string[] {
  const n = def.networks ?? ['default'];
  return (Array.isArray(n) ? [...n] : Object.keys(n)).sort();
}

describe('docker-compose.yml', () => {
  const config = parse(composeConfig());

  it('parses with the Docker compose tooling and has every part of the service', () => {
    expect(Object.keys(config.services).sort()).toEqual(['api', 'mongo', 'proxy', 'redis', 'temporal', 'temporal-db', 'temporal-setup', 'temporal-ui', 'worker']);
    expect(config.services.mongo.image).toBe('mongo:7');
  });

  it('gives api and worker only variables the code reads, pointing at the compose services', () => {
    for (const name of ['api', 'worker']) {
      const env = config.services[name].environment as Record<string, string>;
      for (const key of Object.keys(env)) expect(CONFIG_VARIABLES).toContain(key);
      expect(env.MONGODB_URI).toBe('mongodb://mongo:27017/payments');
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    }
  });

  it('runs 2 API replicas and 2 workers', () => {
    expect(config.services.api.deploy.replicas).toBe(2);
    expect(config.services.worker.deploy.replicas).toBe(2);
  });

  it('publishes Temporal and its Web UI on loopback only (they have no authentication); only the proxy in front of the API is public', () => {
    const published: { service: string; hostIp: string | undefined; target: number }[] = [];
    for (const [service, def] of Object.entries<any>(config.services)) {
      for (const p of def.ports ?? []) {
        // Long form ({host_ip, published, target}) or, from docker-compose v1, "ip:published:target/proto".
        if (typeof p === 'string') {
          const parts = p.replace(/\/\w+$/, '').split(':');
          published.push({ service, hostIp: parts.length === 3 ? parts[0] : undefined, target: Number(parts.at(-1)) });
        } else published.push({ service, hostIp: p.host_ip, target: Number(p.target) });
      }
    }
    expect(published.map((p) => p.service).sort()).toEqual(['proxy', 'temporal', 'temporal-ui']);
    for (const p of published.filter((x) => x.service !== 'proxy')) expect(p.hostIp).toBe('127.0.0.1');
    expect(published.find((p) => p.service === 'proxy')).toEqual({ service: 'proxy', hostIp: undefined, target: 80 });
    expect(config.services.mongo.ports).toBeUndefined();
    expect(config.services.api.ports).toBeUndefined();
  });

  it('puts the proxy in front of the API on a network of their own, which is what the API trusts as its proxy', () => {
    const proxy = config.services.proxy;
    expect(proxy.image).toMatch(/^nginx:/);
    expect(networksOf(proxy)).toEqual(['edge']);
    expect(networksOf(config.services.api)).toEqual(['default', 'edge']);
    for (const name of Object.keys(config.services).filter((n) => n !== 'api' && n !== 'proxy')) {
      expect(networksOf(config.services[name])).not.toContain('edge');
    }
    const subnets = config.networks.edge.ipam.config.map((c: { subnet: string }) => c.subnet);
    expect(subnets).toHaveLength(1);
    expect(config.services.api.environment.TRUST_PROXY).toBe(subnets[0]);
    // The proxy's configuration, mounted read-only, sends to the API's port and says who the client is.
    const mounts = (proxy.volumes as (string | { source: string; target: string; read_only?: boolean })[]).map((v) =>
      typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1], read_only: v.endsWith(':ro') } : v,
    );
    const conf = mounts.find((m) => m.target === '/etc/nginx/conf.d/default.conf')!;
    expect(conf.read_only).toBe(true);
    expect(conf.source).toBe(join(root, 'deploy', 'compose', 'nginx.conf'));
    const nginx = readFileSync(conf.source, 'utf8');
    expect(nginx).toMatch(new RegExp(`server api:${config.services.api.environment.PORT} resolve;`));
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-Proto \$scheme;/);
  });

  it('lets the API drain before it is killed, and the workers finish their activities', () => {
    const api = config.services.api;
    expect(seconds(api.stop_grace_period)).toBeGreaterThan(Number(api.environment.DRAIN_TIMEOUT_MS) / 1000 + 5);
    expect(seconds(config.services.worker.stop_grace_period)).toBeGreaterThanOrEqual(30);
    expect(api.healthcheck.test.join(' ')).toContain('/readyz');
  });
});
