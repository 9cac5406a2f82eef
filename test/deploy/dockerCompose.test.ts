/** docker-compose.yml cannot run here (no Docker engine), but the Docker tooling must parse it. */
import { execFileSync } from 'node:child_process';
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

describe('docker-compose.yml', () => {
  const config = parse(composeConfig());

  it('parses with the Docker compose tooling and has every part of the service', () => {
    expect(Object.keys(config.services).sort()).toEqual(['api', 'mongo', 'temporal', 'temporal-db', 'temporal-setup', 'temporal-ui', 'worker']);
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

  it('publishes Temporal and its Web UI on loopback only (they have no authentication); only the API is public', () => {
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
    expect(published.map((p) => p.service).sort()).toEqual(['api', 'temporal', 'temporal-ui']);
    for (const p of published.filter((x) => x.service !== 'api')) expect(p.hostIp).toBe('127.0.0.1');
    expect(config.services.mongo.ports).toBeUndefined();
  });
});
