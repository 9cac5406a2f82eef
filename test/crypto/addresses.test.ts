import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { base58, bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2';
import { explorerFor, toChecksumAddress, validateAddress } from '../../src/cryptocurrency/addresses';

const ok = (currency: 'BTC' | 'ETH', a: string, mode: 'mainnet' | 'test' = 'mainnet') => {
  const r = validateAddress(currency, a, mode);
  if (!r.ok) throw new Error(`expected ${a} to be valid in ${mode}: ${r.reason}`);
  return r;
};
const bad = (currency: 'BTC' | 'ETH', a: string, mode: 'mainnet' | 'test' = 'test') => {
  const r = validateAddress(currency, a, mode);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.reason).toEqual(expect.any(String));
};

/** Flip one character to another of the same alphabet (a corrupted copy). */
function corrupt(s: string, i: number, alphabet: string): string {
  const c = s[i];
  const idx = alphabet.indexOf(c);
  const repl = alphabet[(idx + 1) % alphabet.length];
  return s.slice(0, i) + repl + s.slice(i + 1);
}
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

describe('BTC base58check', () => {
  it.each([
    ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 'p2pkh'], // genesis coinbase
    ['17VZNX1SN5NtKa8UQFxwQbFeFc3iqRYhem', 'p2pkh'],
    ['3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'p2sh'], // BIP-13 example
    ['3EktnHQD7RiAE6uzMj2ZifT9YgRrkSgzQX', 'p2sh'],
  ])('accepts mainnet %s as %s, canonical as given', (a, kind) => {
    for (const mode of ['mainnet', 'test'] as const) {
      expect(ok('BTC', a, mode)).toEqual({ ok: true, canonical: a, kind, network: 'mainnet' });
    }
  });

  it.each([
    ['mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', 'p2pkh'],
    ['n3GNqMveyvaPvUbH469vDRadqpJMPc84JA', 'p2pkh'],
    ['2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc', 'p2sh'],
  ])('accepts testnet %s (%s) only in test mode', (a, kind) => {
    expect(ok('BTC', a, 'test')).toEqual({ ok: true, canonical: a, kind, network: 'testnet' });
    const r = validateAddress('BTC', a, 'mainnet');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/mainnet/);
  });

  it('rejects corrupted checksums, bad characters and other versions', () => {
    bad('BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb');
    bad('BTC', '17VZNX1SN5NtKa8UFFxwQbFeFc3iqRYhem');
    bad('BTC', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLY');
    bad('BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7Divf0a'); // 0 is not base58
    bad('BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7Div'); // truncated
    bad('BTC', '');
    bad('BTC', '   ');
    bad('BTC', 'not an address');
    bad('BTC', '1A1zP1eP5QGefi2 DMPTfTL5SLmv7DivfNa');
    // A valid base58check string with another version byte (0x30, Litecoin P2PKH).
    const b58c = createBase58check(sha256);
    const ltc = b58c.encode(Uint8Array.from([0x30, ...new Uint8Array(20).fill(7)]));
    bad('BTC', ltc);
    // Right version, wrong payload length.
    bad('BTC', b58c.encode(Uint8Array.from([0x00, ...new Uint8Array(19).fill(7)])));
  });

  it('rejects every single-character corruption of a real address', () => {
    const a = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
    for (let i = 0; i < a.length; i++) bad('BTC', corrupt(a, i, B58));
  });

  it('property: encodes of random hashes validate with the right kind; their corruptions do not', () => {
    const b58c = createBase58check(sha256);
    const versions = [
      [0x00, 'p2pkh', 'mainnet'],
      [0x05, 'p2sh', 'mainnet'],
      [0x6f, 'p2pkh', 'testnet'],
      [0xc4, 'p2sh', 'testnet'],
    ] as const;
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.constantFrom(...versions), fc.nat(), (hash, [version, kind, network], pos) => {
        const a = b58c.encode(Uint8Array.from([version, ...hash]));
        // Independent check of the checksum with node:crypto.
        const payload = Uint8Array.from([version, ...hash]);
        const check = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest().subarray(0, 4);
        expect(Buffer.from(base58.decode(a))).toEqual(Buffer.concat([payload, check]));
        expect(validateAddress('BTC', a, 'test')).toEqual({ ok: true, canonical: a, kind, network });
        expect(validateAddress('BTC', a, 'mainnet').ok).toBe(network === 'mainnet');
        expect(validateAddress('BTC', corrupt(a, pos % a.length, B58), 'test').ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('BTC segwit (BIP-173 / BIP-350 vectors)', () => {
  const valid: [string, string, string, string][] = [
    // address, kind, network, scriptPubKey hex
    ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', 'p2wpkh', 'mainnet', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'p2wpkh', 'mainnet', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', 'p2wsh', 'testnet', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262'],
    ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', 'witness_v1', 'mainnet', '5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6'],
    ['BC1SW50QGDZ25J', 'witness_v16', 'mainnet', '6002751e'],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', 'witness_v2', 'mainnet', '5210751e76e8199196d454941c45d1b3a323'],
    ['tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy', 'p2wsh', 'testnet', '0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433'],
    ['tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', 'p2tr', 'testnet', '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433'],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', 'p2tr', 'mainnet', '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798'],
    ['bcrt1qkutd3e9qttu3v8w27rtze6r5whyx8mmjy8yf7z', 'p2wpkh', 'regtest', ''],
    ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'p2wpkh', 'testnet', ''],
  ];

  it.each(valid)('accepts %s as %s (%s)', (a, kind, network) => {
    const r = ok('BTC', a, 'test');
    expect(r).toEqual({ ok: true, canonical: a.toLowerCase(), kind, network });
    expect(validateAddress('BTC', a, 'mainnet').ok).toBe(network === 'mainnet');
  });

  it('decodes the vectors to the published witness programs (library cross-check)', () => {
    for (const [a, , , script] of valid) {
      if (!script) continue;
      const lower = a.toLowerCase();
      const d = (script.startsWith('00') ? bech32 : bech32m).decode(lower as `${string}1${string}`);
      const version = d.words[0];
      const program = bech32.fromWords(d.words.slice(1));
      const op = version === 0 ? 0 : 0x50 + version;
      expect(Buffer.from([op, program.length, ...program]).toString('hex')).toBe(script);
    }
  });

  it.each([
    'tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', // invalid hrp
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', // bech32 instead of bech32m
    'tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf', // bech32 instead of bech32m
    'BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL', // bech32 instead of bech32m
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', // bech32m instead of bech32
    'tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47', // bech32m instead of bech32
    'bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4', // invalid character
    'BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', // witness version 17
    'bc1pw5dgrnzv', // program of 1 byte
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', // 41 bytes
    'BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', // v0 with 16 bytes
    'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', // mixed case
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', // > 4 padding bits
    'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j', // non-zero padding
    'bc1gmk9yu', // empty data
    // BIP-173 invalid addresses
    'tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty',
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5',
    'BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2',
    'bc1rw5uspcuh',
    'bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90',
    'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7',
    'bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du',
    'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv',
    'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3t4', // mixed case
  ])('rejects %s', (a) => bad('BTC', a, 'test'));

  it('rejects every single-character corruption of a real address', () => {
    const a = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    for (let i = 3; i < a.length; i++) bad('BTC', corrupt(a, i, B32));
  });

  it('property: random witness programs round-trip; hrp decides the network', () => {
    const cases = fc.oneof(
      fc.record({ version: fc.constant(0), program: fc.oneof(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.uint8Array({ minLength: 32, maxLength: 32 })) }),
      fc.record({ version: fc.integer({ min: 1, max: 16 }), program: fc.uint8Array({ minLength: 2, maxLength: 40 }) }),
    );
    fc.assert(
      fc.property(cases, fc.constantFrom('bc', 'tb', 'bcrt'), fc.boolean(), ({ version, program }, hrp, upper) => {
        const codec = version === 0 ? bech32 : bech32m;
        const a = codec.encode(hrp, [version, ...bech32.toWords(program)]);
        const input = upper ? a.toUpperCase() : a;
        const r = validateAddress('BTC', input, 'test');
        expect(r.ok).toBe(true);
        if (r.ok) {
          expect(r.canonical).toBe(a);
          expect(r.network).toBe(hrp === 'bc' ? 'mainnet' : hrp === 'tb' ? 'testnet' : 'regtest');
          if (version === 0) expect(r.kind).toBe(program.length === 20 ? 'p2wpkh' : 'p2wsh');
          else if (version === 1 && program.length === 32) expect(r.kind).toBe('p2tr');
          else expect(r.kind).toBe(`witness_v${version}`);
        }
        expect(validateAddress('BTC', input, 'mainnet').ok).toBe(hrp === 'bc');
        // The other checksum variant over the same data is refused.
        const other = (version === 0 ? bech32m : bech32).encode(hrp, [version, ...bech32.toWords(program)]);
        expect(validateAddress('BTC', other, 'test').ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('trims surrounding whitespace', () => {
    expect(ok('BTC', '  bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4\n').canonical).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
  });
});

describe('ETH', () => {
  const eip55 = [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    // EIP-55 "all caps" / "all lower" examples
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    '0xde709f2102306220921060314715629080e2fb77',
    '0x27b1fdb04752bbc536007a920d24acb045561c26',
  ];

  it.each(eip55)('accepts %s; canonical is lowercase; checksum form is a fixed point', (a) => {
    for (const mode of ['mainnet', 'test'] as const) expect(ok('ETH', a, mode)).toEqual({ ok: true, canonical: a.toLowerCase(), kind: 'account', network: 'any' });
    expect(toChecksumAddress(a.toLowerCase())).toBe(a);
    expect(toChecksumAddress(a.toUpperCase().replace('0X', '0x'))).toBe(a);
  });

  it('accepts unchecksummed all-lowercase and all-uppercase forms', () => {
    ok('ETH', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
    ok('ETH', '0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED');
    ok('ETH', '0x0000000000000000000000000000000000000000');
  });

  it('rejects bad checksums and malformed forms', () => {
    bad('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'); // last letter flipped
    bad('ETH', '0xFB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'); // first letter flipped
    bad('ETH', '0x9866208bea68B10f04697c00b891541a305Df851');
    bad('ETH', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
    bad('ETH', '0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
    bad('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe');
    bad('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd');
    bad('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg');
    bad('ETH', '');
    bad('ETH', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    bad('BTC', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
  });

  it('property: checksummed forms validate; flipping the case of one letter breaks them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.nat(), (bytes, pick) => {
        const lower = '0x' + Buffer.from(bytes).toString('hex');
        const cs = toChecksumAddress(lower);
        expect(cs.toLowerCase()).toBe(lower);
        expect(validateAddress('ETH', cs, 'mainnet')).toEqual({ ok: true, canonical: lower, kind: 'account', network: 'any' });
        expect(validateAddress('ETH', lower, 'mainnet').ok).toBe(true);
        const letters = [...cs].map((c, i) => (i >= 2 && /[a-fA-F]/.test(c) ? i : -1)).filter((i) => i >= 0);
        if (letters.length > 0) {
          const i = letters[pick % letters.length];
          const c = cs[i];
          const flipped = cs.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + cs.slice(i + 1);
          const body = flipped.slice(2);
          const stillUnchecksummed = body === body.toLowerCase() || body === body.toUpperCase();
          expect(validateAddress('ETH', flipped, 'mainnet').ok).toBe(stillUnchecksummed);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('explorerFor', () => {
  it('links mempool.space and Etherscan, testnet variants in a sandbox', () => {
    expect(explorerFor('BTC', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', false)).toEqual({
      name: 'mempool.space',
      url: 'https://mempool.space/address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    });
    expect(explorerFor('BTC', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', true)).toEqual({
      name: 'mempool.space',
      url: 'https://mempool.space/testnet/address/tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
    });
    expect(explorerFor('BTC', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', true).url).toBe('https://mempool.space/testnet/address/mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn');
    // A mainnet address registered in a sandbox is shown on the mainnet explorer.
    expect(explorerFor('BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', true).url).toBe('https://mempool.space/address/1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    const eth = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
    expect(explorerFor('ETH', eth, false)).toEqual({ name: 'Etherscan', url: `https://etherscan.io/address/${eth}` });
    expect(explorerFor('ETH', eth, true)).toEqual({ name: 'Etherscan', url: `https://sepolia.etherscan.io/address/${eth}` });
  });
});
