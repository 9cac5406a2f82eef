import { loadConfig, ConfigError } from '../../src/config';

describe('config', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, mongodbUri: 'mongodb://127.0.0.1:27017/payments', rateLimitPerMinute: 600, invoiceDueDays: 7, slippageTolerance: '0.005' });
    expect(c.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'payments' });
    expect(c.webhookAllowPrivateNetworks).toBe(false);
    expect(c.claimVerification).toBe(true);
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
  ])('stops on a bad %s (%s)', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('reads booleans and trims a trailing slash from PUBLIC_URL', () => {
    const c = loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CLAIM_VERIFICATION: 'off', PUBLIC_URL: 'https://pay.example.com/' });
    expect(c.webhookAllowPrivateNetworks).toBe(true);
    expect(c.claimVerification).toBe(false);
    expect(c.publicUrl).toBe('https://pay.example.com');
  });
});
