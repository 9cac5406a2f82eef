/**
 * The API's token reader: concurrent requests with one token share its read, and a request that
 * arrives after a revocation is refused (the contract: revoking a token takes effect at once).
 */
import { useTestDatabase } from '../support/db';
import { createAccount, resolveToken, revokeToken, sharedTokenReader } from '../../src/services/accounts';
import { ApiToken } from '../../src/models/apiToken';

useTestDatabase();

/** Counts the reads of a token by hash while `fn` runs. */
async function tokenFinds(fn: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(ApiToken, 'findById');
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('shared token reader', () => {
  it('resolves 20 concurrent requests with one token from one or two reads', async () => {
    const acct = await createAccount({ email: `reader-${Date.now()}@example.com`, password: 'correct horse battery' });
    const readToken = sharedTokenReader();
    let resolved: Awaited<ReturnType<typeof resolveToken>>[] = [];
    const finds = await tokenFinds(async () => {
      resolved = await Promise.all(Array.from({ length: 20 }, () => resolveToken(acct.token, readToken)));
    });
    // One read starts at once; the requests that arrive while it runs share the one queued behind it.
    expect(finds).toBeLessThanOrEqual(2);
    expect(resolved.map((a) => a?.accountId)).toEqual(Array.from({ length: 20 }, () => acct.account_id));
    // Without the shared reader each request reads the token itself.
    expect(await tokenFinds(() => Promise.all(Array.from({ length: 5 }, () => resolveToken(acct.token))))).toBe(5);
  });

  it('refuses a token revoked before the request arrived', async () => {
    const acct = await createAccount({ email: `revoked-${Date.now()}@example.com`, password: 'correct horse battery' });
    const readToken = sharedTokenReader();
    expect(await resolveToken(acct.token, readToken)).toMatchObject({ accountId: acct.account_id, sandbox: null });
    expect(await revokeToken(acct.token)).toBe(true);
    expect(await resolveToken(acct.token, readToken)).toBeNull();
    expect(await resolveToken(acct.sandbox_token, readToken)).toMatchObject({ accountId: acct.account_id });
  });
});
