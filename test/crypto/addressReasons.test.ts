import { bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2';
import { explorerFor, isSupportedCurrency, SUPPORTED_CURRENCIES, toChecksumAddress, validateAddress } from '../../src/cryptocurrency/addresses';
import { BTC_BECH32, BTC_P2PKH, BTC_TAPROOT, BTC_TESTNET_BECH32, ETH_EIP55 } from './helpers';

const b58c = createBase58check(sha256);
const reason = (currency: string, a: unknown, mode: 'mainnet' | 'test' = 'test') => {
  const r = validateAddress(currency as 'BTC', a as string, mode);
  return r.ok ? `ok ${r.kind} ${r.network}` : r.reason;
};
const segwit = (hrp: string, version: number, program: Uint8Array, coder = version === 0 ? bech32 : bech32m) =>
  coder.encode(hrp, [version, ...coder.toWords(program)], 200);

describe('address rejections name their reason', () => {
  it.each([
    ['BTC', 12345, 'address must be a string'],
    ['BTC', '   ', 'address is blank'],
    ['BTC', '', 'address is blank'],
    ['BTC', '1A1zP1eP5QG efi2DMPTfTL5SLmv7DivfNa', 'address must not contain whitespace'],
    ['ETH', `0x${'a'.repeat(119)}`, 'address too long'],
    ['DOGE', BTC_P2PKH, 'unsupported currency DOGE'],
    ['BTC', 'bc1QW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'bech32 address must not mix upper and lower case'],
    ['BTC', BTC_BECH32.slice(0, -1) + 'q', 'invalid bech32 checksum or characters'],
    ['BTC', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'.replace('bc1', 'bcrt1x'), 'invalid bech32 checksum or characters'],
    ['BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0', 'not a valid base58 or bech32 Bitcoin address'],
    ['BTC', '01A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 'not a valid base58 or bech32 Bitcoin address'],
    ['BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', 'invalid base58check checksum'],
    ['BTC', b58c.encode(new Uint8Array(20)), 'invalid base58 address payload length'],
    ['BTC', b58c.encode(Uint8Array.of(0x30, ...new Uint8Array(20))), 'unknown base58 address version 0x30'],
    ['BTC', b58c.encode(Uint8Array.of(0x01, ...new Uint8Array(20))), 'unknown base58 address version 0x01'],
    ['ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', 'ETH address must be 0x followed by 40 hex characters'],
    ['ETH', `x${ETH_EIP55}`, 'ETH address must be 0x followed by 40 hex characters'],
    ['ETH', `${ETH_EIP55}0`, 'ETH address must be 0x followed by 40 hex characters'],
    ['ETH', ETH_EIP55.replace('aA', 'Aa'), 'invalid EIP-55 checksum'],
  ])('%s %s: %s', (currency, address, expected) => {
    expect(reason(currency, address)).toBe(expected);
  });

  it('names the segwit rule an address breaks', () => {
    const p20 = new Uint8Array(20).fill(7);
    const p32 = new Uint8Array(32).fill(7);
    expect(reason('BTC', `bc1${'q'.repeat(10)}1${'q'.repeat(10)}`)).toBe(`unknown bech32 prefix "bc1${'q'.repeat(10)}"`);
    expect(reason('BTC', bech32.encode('bc', [], 90))).toBe('bech32 address has no witness program');
    expect(reason('BTC', bech32m.encode('bc', [17, ...bech32m.toWords(p20)], 90))).toBe('invalid witness version 17');
    expect(reason('BTC', bech32m.encode('bc', [16, ...bech32m.toWords(p20)], 90))).toBe('ok witness_v16 mainnet');
    expect(reason('BTC', bech32m.encode('bc', [1, 31], 90))).toBe('invalid witness program padding');
    expect(reason('BTC', segwit('bc', 1, new Uint8Array(1)))).toBe('invalid witness program length 1');
    expect(reason('BTC', segwit('bc', 1, new Uint8Array(2)))).toBe('ok witness_v1 mainnet');
    expect(reason('BTC', segwit('bc', 1, new Uint8Array(40)))).toBe('ok witness_v1 mainnet');
    expect(reason('BTC', segwit('bc', 1, new Uint8Array(41)))).toBe('invalid witness program length 41');
    expect(reason('BTC', segwit('bc', 0, p20, bech32m))).toBe('witness version 0 must use bech32, not bech32m');
    expect(reason('BTC', segwit('bc', 0, new Uint8Array(21)))).toBe('invalid witness v0 program length 21');
    expect(reason('BTC', segwit('bc', 0, p32))).toBe('ok p2wsh mainnet');
    expect(reason('BTC', segwit('bc', 1, p32, bech32))).toBe('witness version 1 must use bech32m (BIP-350), not bech32');
    expect(reason('BTC', segwit('bc', 1, p20))).toBe('ok witness_v1 mainnet');
    expect(reason('BTC', segwit('bc', 2, p32))).toBe('ok witness_v2 mainnet');
    expect(reason('BTC', BTC_TAPROOT)).toBe('ok p2tr mainnet');
    expect(reason('BTC', segwit('bcrt', 0, p20))).toBe('ok p2wpkh regtest');
    expect(reason('BTC', segwit('bcrt', 0, p20), 'mainnet')).toBe('regtest address not accepted here: only mainnet addresses are accepted outside a sandbox');
  });

  it('limits bech32 addresses to 90 characters', () => {
    // 'bc1' + witness version + 52 data characters + 6 checksum characters for a 40-byte program = 74; pad the prefix instead.
    const at90 = segwit('bcrt', 1, new Uint8Array(40));
    expect(at90.length).toBeLessThanOrEqual(90);
    expect(reason('BTC', at90)).toBe('ok witness_v1 regtest');
    const long = `bc1${'q'.repeat(88)}`;
    expect(long.length).toBe(91);
    expect(reason('BTC', long)).toBe('bech32 address too long');
    const exactly90 = `bc1${'q'.repeat(87)}`;
    expect(reason('BTC', exactly90)).toBe('invalid bech32 checksum or characters');
  });

  it('takes an address of up to 120 characters to its currency', () => {
    expect(reason('ETH', `0x${'a'.repeat(118)}`)).toBe('ETH address must be 0x followed by 40 hex characters');
    expect(reason('BTC', ETH_EIP55)).toBe('not a valid base58 or bech32 Bitcoin address');
    expect(reason('ETH', BTC_P2PKH)).toBe('ETH address must be 0x followed by 40 hex characters');
    expect(reason('ETH', `  ${ETH_EIP55}  `)).toBe('ok account any');
  });

  it('accepts any network in a sandbox, only mainnet (or ETH) outside', () => {
    expect(reason('BTC', BTC_TESTNET_BECH32, 'test')).toBe('ok p2wpkh testnet');
    expect(reason('BTC', BTC_TESTNET_BECH32, 'mainnet')).toBe('testnet address not accepted here: only mainnet addresses are accepted outside a sandbox');
    expect(reason('BTC', BTC_BECH32, 'mainnet')).toBe('ok p2wpkh mainnet');
    expect(reason('ETH', ETH_EIP55, 'mainnet')).toBe('ok account any');
  });
});

describe('supported currencies', () => {
  it('are BTC and ETH', () => {
    expect(SUPPORTED_CURRENCIES).toEqual(['BTC', 'ETH']);
    expect(isSupportedCurrency('BTC')).toBe(true);
    expect(isSupportedCurrency('ETH')).toBe(true);
    for (const c of ['', 'btc', 'DOGE', undefined, null, 1]) expect([c, isSupportedCurrency(c)]).toEqual([c, false]);
  });
});

describe('toChecksumAddress', () => {
  it('takes 40 hex digits with or without a leading 0x, nothing else (no 0x inside)', () => {
    const body = ETH_EIP55.slice(2).toLowerCase();
    expect(toChecksumAddress(body)).toBe(ETH_EIP55);
    expect(toChecksumAddress(`0X${body}`.toLowerCase())).toBe(ETH_EIP55);
    for (const bad of [`${body}0`, body.slice(1), `0x${body}0`, `00x${body}`, `x0${body}`, `0x${body.slice(1)}g`, `${body.slice(0, 2)}0x${body.slice(2)}`]) {
      expect(() => toChecksumAddress(bad)).toThrow(new TypeError('expected 0x + 40 hex digits'));
    }
  });
});

describe('explorerFor', () => {
  it('links a sandbox BTC address to the testnet explorer unless it is a mainnet address', () => {
    expect(explorerFor('BTC', BTC_TESTNET_BECH32, true).url).toBe(`https://mempool.space/testnet/address/${BTC_TESTNET_BECH32}`);
    expect(explorerFor('BTC', 'not-an-address', true).url).toBe('https://mempool.space/testnet/address/not-an-address');
    expect(explorerFor('BTC', BTC_BECH32, true).url).toBe(`https://mempool.space/address/${BTC_BECH32}`);
    expect(explorerFor('BTC', BTC_TESTNET_BECH32, false).url).toBe(`https://mempool.space/address/${BTC_TESTNET_BECH32}`);
  });
});

describe('base58 addresses that contain a segwit prefix', () => {
  // A P2PKH address (version 0x00, hash160 = the first 20 bytes of sha256("193")) with "Bc1" inside:
  // only a leading bc1/tb1/bcrt1 makes an address bech32, so this one is base58 and valid.
  const address = '1AWYykEnbE3xRnYDyBc15VNzquHDyoL7MD';

  it('are validated as base58, not as bech32', () => {
    expect(address).toBe(b58c.encode(Uint8Array.of(0x00, ...sha256(new TextEncoder().encode('193')).subarray(0, 20))));
    expect(reason('BTC', address, 'mainnet')).toBe('ok p2pkh mainnet');
    expect(validateAddress('BTC', address, 'mainnet')).toEqual({ ok: true, canonical: address, kind: 'p2pkh', network: 'mainnet' });
  });
});
