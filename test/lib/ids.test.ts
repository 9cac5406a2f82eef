import { newId, randomString, ID_PREFIX, randomHex, derivedId } from '../../src/lib/ids';
import { paramName } from '../../src/api/validation';
import { parseAuthorization } from '../../src/api/middleware/auth';

describe('ids', () => {
  it('derive the same id from the same key, byte for byte (stored allocations and replay histories depend on it)', () => {
    // Values produced by allocation.ts's own hashing before allocationIdFor moved onto derivedId.
    expect(derivedId(ID_PREFIX.allocation, 'trxn_abc|inv_def')).toBe('alloc_4fx3zY27AG7bkBBVn7MQxj0A');
    expect(derivedId(ID_PREFIX.allocation, 'trxn_A1|inv_B2|manual|deadbeef0011')).toBe('alloc_ckbYtbHH2L3jYzhQJct4jzIx');
    expect(derivedId(ID_PREFIX.allocation, '')).toBe('alloc_fqA4S4SKU3wETnzado3gcVNE');
  });

  it('are a prefix and 24 base62 characters, unique', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newId(ID_PREFIX.customer)));
    expect(ids.size).toBe(5000);
    for (const id of ids) expect(id).toMatch(/^cust_[0-9A-Za-z]{24}$/);
  });

  it('draws every character of the alphabet roughly evenly', () => {
    const counts = new Map<string, number>();
    for (const ch of randomString(62 * 2000, 'ab')) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    const [a, b] = [counts.get('a')!, counts.get('b')!];
    expect(Math.abs(a - b) / (a + b)).toBeLessThan(0.05);
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('param names', () => {
  it('follow the spec\'s nested style', () => {
    expect(paramName('/line_items/0/price_id')).toBe('line_items[][price_id]');
    expect(paramName('/phases/1/items/0', 'price_id')).toBe('phases[][items][][price_id]');
    expect(paramName('', 'email')).toBe('email');
    expect(paramName('')).toBe('');
  });
});

describe('Authorization header', () => {
  it('accepts Bearer and token forms', () => {
    const t = 'a'.repeat(32);
    expect(parseAuthorization(`Bearer ${t}`)).toBe(t);
    expect(parseAuthorization(`token ${t}`)).toBe(t);
    expect(parseAuthorization(`Token token="${t}"`)).toBe(t);
    expect(parseAuthorization(`Basic ${t}`)).toBeNull();
    expect(parseAuthorization(undefined)).toBeNull();
  });
});
