import { loadConfig, ConfigError, configWarnings } from '../../src/config';

describe('config', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, mongodbUri: 'mongodb://127.0.0.1:27017/payments', rateLimitPerMinute: 600, invoiceDueDays: 7, slippageTolerance: '0.005' });
    // auto: each process picks its transport (clientTransportOf).
    expect(c.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'payments', clientTransport: 'auto', tls: null, apiKey: null });
    // Above a load balancer's usual 60 s idle timeout (docs/configuration.md).
    expect(c).toMatchObject({ httpKeepAliveTimeoutMs: 65_000, httpHeadersTimeoutMs: 66_000 });
    expect(c.webhookAllowPrivateNetworks).toBe(false);
    expect(c.claimVerification).toBe(true);
  });

  it('takes TEMPORAL_CLIENT_TRANSPORT=native (the default under Deno) on Node too', () => {
    expect(loadConfig({ TEMPORAL_CLIENT_TRANSPORT: 'native' }).temporal.clientTransport).toBe('native');
    expect(loadConfig({ TEMPORAL_CLIENT_TRANSPORT: 'grpc-js' }).temporal.clientTransport).toBe('grpc-js');
  });

  it.each([
    ['PORT', 'abc', /PORT must be an integer/],
    ['PORT', '70000', /PORT must be between/],
    ['MONGODB_URI', 'postgres://x', /MONGODB_URI/],
    ['SLIPPAGE_TOLERANCE', '5%', /SLIPPAGE_TOLERANCE/],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'maybe', /true or false/],
    ['PUBLIC_URL', 'not a url', /PUBLIC_URL must be a URL/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['RATE_LIMIT_PER_MINUTE', '0', /RATE_LIMIT_PER_MINUTE/],
    ['PRICE_ORACLE', 'chainlink', /PRICE_ORACLE must be one of fixed, coingecko/],
    ['COINGECKO_URL', 'not a url', /COINGECKO_URL must be a URL/],
    ['TEMPORAL_CLIENT_TRANSPORT', 'http', /TEMPORAL_CLIENT_TRANSPORT must be one of auto, grpc-js, native/],
    ['TEMPORAL_TLS', 'maybe', /TEMPORAL_TLS must be true or false/],
    ['TEMPORAL_TLS_CA', '/nonexistent/ca.crt', /TEMPORAL_TLS_CA: cannot read "\/nonexistent\/ca.crt"/],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '66000', /HTTP_HEADERS_TIMEOUT_MS \(66000\) must exceed HTTP_KEEP_ALIVE_TIMEOUT_MS/],
    ['HTTP_HEADERS_TIMEOUT_MS', '5000', /must exceed HTTP_KEEP_ALIVE_TIMEOUT_MS/],
  ])('stops on a bad %s (%s)', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('refuses CLAIM_VERIFICATION=off and WEBHOOK_ALLOW_PRIVATE_NETWORKS=true unless the API listens on loopback or ALLOW_UNSAFE_LOCAL_SETTINGS=true', () => {
    for (const unsafe of [{ CLAIM_VERIFICATION: 'off' }, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }]) {
      for (const HOST of ['0.0.0.0', '::', '192.168.1.10', 'api.example.com', '127.0.0.1.example.com']) {
        expect(() => loadConfig({ ...unsafe, HOST })).toThrow(ConfigError);
        expect(() => loadConfig({ ...unsafe, HOST })).toThrow(/local runs only.*ALLOW_UNSAFE_LOCAL_SETTINGS=true/);
        expect(loadConfig({ ...unsafe, HOST, ALLOW_UNSAFE_LOCAL_SETTINGS: 'true' }).host).toBe(HOST);
      }
      for (const HOST of ['127.0.0.1', '127.0.0.2', '::1', 'localhost', '::ffff:127.0.0.1']) {
        expect(loadConfig({ ...unsafe, HOST }).host).toBe(HOST);
      }
      expect(loadConfig(unsafe).host).toBe('127.0.0.1');
    }
    // The safe values need nothing.
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(() => loadConfig({ ALLOW_UNSAFE_LOCAL_SETTINGS: 'maybe' })).toThrow(/true or false/);
  });

  it('refuses WEBHOOK_ALLOW_PRIVATE_NETWORKS=true in the worker, whose HOST binds only its metrics, unless ALLOW_UNSAFE_LOCAL_SETTINGS=true', () => {
    for (const HOST of [undefined, '127.0.0.1', 'localhost', '0.0.0.0']) {
      const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...(HOST ? { HOST } : {}) };
      expect(() => loadConfig(env, 'worker')).toThrow(ConfigError);
      expect(() => loadConfig(env, 'worker')).toThrow(/WEBHOOK_ALLOW_PRIVATE_NETWORKS=true is for local runs only.*ALLOW_UNSAFE_LOCAL_SETTINGS=true/);
      expect(loadConfig({ ...env, ALLOW_UNSAFE_LOCAL_SETTINGS: 'true' }, 'worker').webhookAllowPrivateNetworks).toBe(true);
    }
    // The API keeps its rule (loopback HOST is enough there); the worker's other settings are as before.
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, 'api').webhookAllowPrivateNetworks).toBe(true);
    expect(loadConfig({ CLAIM_VERIFICATION: 'off' }, 'worker').claimVerification).toBe(false);
    expect(loadConfig({}, 'worker').webhookAllowPrivateNetworks).toBe(false);
  });

  it('reads WEBHOOK_ALLOWED_PORTS: 443 only by default, or a list of ports', () => {
    expect(loadConfig({}).webhookAllowedPorts).toEqual([]);
    expect(loadConfig({ WEBHOOK_ALLOWED_PORTS: ' 8443, 9443,8443 ' }).webhookAllowedPorts).toEqual([8443, 9443]);
    for (const bad of ['0', '65536', 'http', '8443;9443', '8443,', '-1', '1.5']) {
      expect(() => loadConfig({ WEBHOOK_ALLOWED_PORTS: bad })).toThrow(/WEBHOOK_ALLOWED_PORTS must be a comma-separated list of ports/);
    }
  });

  it('reads METRICS_TOKEN: unset by default, 32+ printable characters without spaces', () => {
    expect(loadConfig({}).metricsToken).toBeNull();
    const token = 'a'.repeat(31) + 'Z';
    expect(loadConfig({ METRICS_TOKEN: token }).metricsToken).toBe(token);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 32 characters/);
    expect(() => loadConfig({ METRICS_TOKEN: `${'a'.repeat(32)} b` })).toThrow(/METRICS_TOKEN must be printable ASCII without spaces/);
  });

  it('reads TRUST_PROXY: none by default, true for loopback, or a list of proxy addresses and CIDR ranges', () => {
    expect(loadConfig({}).trustProxy).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.5' }).trustProxy).toEqual(['10.0.0.0/8', '192.0.2.5/32']);
    expect(() => loadConfig({ TRUST_PROXY: 'yes please' })).toThrow(/TRUST_PROXY must be true, false or a comma-separated list of proxy addresses or CIDR ranges/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/40' })).toThrow(/TRUST_PROXY/);
  });

  it('warns at start-up when PUBLIC_URL is https and no proxy is trusted', () => {
    expect(configWarnings(loadConfig({ PUBLIC_URL: 'https://pay.example.com' }))).toEqual([expect.stringMatching(/TRUST_PROXY/)]);
    expect(configWarnings(loadConfig({ PUBLIC_URL: 'https://pay.example.com', TRUST_PROXY: '10.0.0.2' }))).toEqual([]);
    expect(configWarnings(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }))).toEqual([]);
  });

  it('reads booleans and trims a trailing slash from PUBLIC_URL', () => {
    const c = loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CLAIM_VERIFICATION: 'off', PUBLIC_URL: 'https://pay.example.com/' });
    expect(c.webhookAllowPrivateNetworks).toBe(true);
    expect(c.claimVerification).toBe(false);
    expect(c.publicUrl).toBe('https://pay.example.com');
  });
});
