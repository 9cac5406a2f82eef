import fc from 'fast-check';
import { canonicalTransactionHash } from '../../src/cryptocurrency/transactionHashes';

// The genesis coinbase txid, and the first ETH transfer's hash (block 46147).
const BTC_TXID = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b';
const ETH_HASH = '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060';

const canonical = (currency: 'BTC' | 'ETH', hash: string) => {
  const r = canonicalTransactionHash(currency, hash);
  if (!r.ok) throw new Error(`expected ${hash} to be a ${currency} hash: ${r.reason}`);
  return r.canonical;
};

describe('canonicalTransactionHash', () => {
  it('BTC: 64 lowercase hex, a 0x prefix of any case stripped', () => {
    for (const spelling of [BTC_TXID, BTC_TXID.toUpperCase(), `0x${BTC_TXID}`, `0X${BTC_TXID.toUpperCase()}`, `  ${BTC_TXID}\n`]) {
      expect(canonical('BTC', spelling)).toBe(BTC_TXID);
    }
  });

  it('ETH: 0x + 64 lowercase hex, whether the prefix is 0x, 0X or missing', () => {
    const body = ETH_HASH.slice(2);
    for (const spelling of [ETH_HASH, `0X${body}`, body, body.toUpperCase(), `0x${body.toUpperCase()}`, ` ${ETH_HASH} `]) {
      expect(canonical('ETH', spelling)).toBe(ETH_HASH);
    }
  });

  it.each([
    ['', 'empty'],
    ['abc123', 'too short'],
    [BTC_TXID.slice(1), '63 digits'],
    [`${BTC_TXID}0`, '65 digits'],
    [`${BTC_TXID.slice(0, 63)}g`, 'not hex'],
    [`0x0x${BTC_TXID}`, 'two prefixes'],
    [`${BTC_TXID.slice(0, 32)} ${BTC_TXID.slice(32)}`, 'space inside'],
    ['tx-1', 'a placeholder'],
  ])('refuses %j (%s) in both currencies', (hash) => {
    for (const currency of ['BTC', 'ETH'] as const) {
      const r = canonicalTransactionHash(currency, hash);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toContain(currency);
    }
  });

  it('every spelling of one 32-byte hash gives one key per currency, and different hashes different keys', () => {
    const hex = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
    const spell = fc.record({ prefix: fc.constantFrom('', '0x', '0X'), upper: fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }) });
    fc.assert(
      fc.property(hex, hex, spell, spell, fc.constantFrom('BTC' as const, 'ETH' as const), (a, b, s1, s2, currency) => {
        const write = (h: string, s: { prefix: string; upper: boolean[] }) => s.prefix + [...h].map((c, i) => (s.upper[i] ? c.toUpperCase() : c)).join('');
        const ka = canonical(currency, write(a, s1));
        expect(canonical(currency, write(a, s2))).toBe(ka);
        expect(ka).toBe(currency === 'ETH' ? `0x${a}` : a);
        if (a !== b) expect(canonical(currency, write(b, s2))).not.toBe(ka);
      }),
    );
  });
});
