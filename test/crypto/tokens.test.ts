import { createHash } from 'node:crypto';
import { bearerMatches, hashToken, newApiToken, TOKEN_FORMAT } from '../../src/cryptography/tokens';

describe('API tokens', () => {
  it('are 32 random lowercase hex characters', () => {
    const tokens = new Set(Array.from({ length: 50 }, newApiToken));
    expect(tokens.size).toBe(50);
    for (const t of tokens) expect(t).toMatch(TOKEN_FORMAT);
  });

  it('accept only exactly 32 lowercase hex characters as the format', () => {
    expect(TOKEN_FORMAT.test('0123456789abcdef0123456789abcdef')).toBe(true);
    for (const bad of ['', '0123456789abcdef0123456789abcde', '0123456789abcdef0123456789abcdef0', '0123456789ABCDEF0123456789abcdef', `x${'0'.repeat(32)}`, `${'0'.repeat(32)}\n`, `${'0'.repeat(31)}g`]) {
      expect([bad, TOKEN_FORMAT.test(bad)]).toEqual([bad, false]);
    }
  });

  it('are stored as the hex SHA-256 of the token', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken('0123456789abcdef0123456789abcdef')).toBe(createHash('sha256').update('0123456789abcdef0123456789abcdef').digest('hex'));
  });
});

describe('bearerMatches', () => {
  const token = 'secret-metrics-token';

  it('accepts exactly `Bearer <token>`, the scheme in any case, surrounding and separating blanks tolerated', () => {
    for (const ok of [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`, `Bearer   ${token}`, `  Bearer ${token}  `]) {
      expect([ok, bearerMatches(ok, token)]).toEqual([ok, true]);
    }
  });

  it('refuses a missing header, another scheme, another token, a prefix or extra words', () => {
    for (const bad of [undefined, '', 'Bearer', 'Bearer ', token, `Basic ${token}`, `Bearer${token}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Bearer ${token} extra`, `xBearer ${token}`, `Bearer\t${token}`]) {
      expect([bad, bearerMatches(bad, token)]).toEqual([bad, false]);
    }
    expect(bearerMatches('Bearer x', 'y')).toBe(false);
  });
});
