/**
 * The API's token reader: concurrent requests with one token share its read, and a request that
 * arrives after a revocation is refused (the contract: revoking a token takes effect at once).
 */
import { useTestDatabase } from '../../support/db';
import { createAccount, createTokenFor, resolveToken, revokeToken, sharedTokenReader } from '../../../src/services/accounts/accounts';
import { ApiTokenUse } from '../../../src/models/apiTokenUse';
import { hashToken } from '../../../src/cryptography/tokens';
import { ApiToken } from '../../../src/models/apiToken';
import { callsDuring } from '../../support/spy';
import { waitFor } from '../../support/wait';

useTestDatabase();

/** Counts the reads of a token by hash while `fn` runs. */
const tokenFinds = (fn: () => Promise<unknown>) => callsDuring(ApiToken, 'findById', fn);

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
    // One request after another: each read starts after its request, so each reads the token.
    expect(await tokenFinds(async () => {
      for (let i = 0; i < 5; i++) await resolveToken(acct.token, readToken);
    })).toBe(5);
  });

  it('refuses a token revoked before the request arrived', async () => {
    const acct = await createAccount({ email: `revoked-${Date.now()}@example.com`, password: 'correct horse battery' });
    const readToken = sharedTokenReader();
    expect(await resolveToken(acct.token, readToken)).toMatchObject({ accountId: acct.account_id, sandbox: null });
    expect(await revokeToken(acct.token)).toBe(true);
    expect(await resolveToken(acct.token, readToken)).toBeNull();
    expect(await resolveToken(acct.sandbox_token, readToken)).toMatchObject({ accountId: acct.account_id });
  });

  it('keeps a revocation that races the recording of a use', async () => {
    // A use written on the token itself (FerretDB writes the whole document it read) could land after
    // the revocation and undo it; uses are kept apart, so every revocation here holds.
    const acct = await createAccount({ email: `race-${Date.now()}@example.com`, password: 'correct horse battery' });
    for (let i = 0; i < 20; i++) {
      const token = await createTokenFor(acct.account_id, null);
      const readToken = sharedTokenReader();
      expect(await resolveToken(token, readToken)).not.toBeNull();
      expect(await revokeToken(token)).toBe(true);
      await new Promise((r) => setTimeout(r, 30));
      expect(await resolveToken(token, readToken)).toBeNull();
      expect(await ApiToken.findById(hashToken(token)).lean()).toMatchObject({ revoked_at: expect.any(Date) });
      // The use is recorded too (not awaited by the request: it may land after the revocation).
      expect(await waitFor(() => ApiTokenUse.findById(hashToken(token)).lean(), 'the use recorded', 10_000)).toMatchObject({ last_used_at: expect.any(Date) });
      expect(await ApiToken.findById(hashToken(token)).lean()).toMatchObject({ revoked_at: expect.any(Date) });
    }
  });
});
