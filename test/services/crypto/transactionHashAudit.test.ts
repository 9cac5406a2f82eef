/**
 * Transactions stored before hashes had one spelling per currency: the audit reports twins,
 * invalid hashes and rewrites, changes nothing unless asked to, and then rewrites only
 * transactions without a twin (and pending claims), through the operator CLI too.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { useTestDatabase } from '../../support/db';
import { CryptoTransaction } from '../../../src/models/cryptoTransaction';
import { PaymentClaim } from '../../../src/models/paymentClaim';
import { auditTransactionHashes } from '../../../src/services/crypto/transactionHashAudit';
import { dedupeKey } from '../../../src/services/crypto/cryptoTransactions';
import { planTransactionHashes } from '../../../src/cryptocurrency/transactionHashes';
import { BTC_BECH32, ETH_EIP55 } from '../../crypto/helpers';

const db = useTestDatabase();
const run = promisify(execFile);
const hex = () => randomBytes(32).toString('hex');
const scope = { accountId: 'acct_legacy', sandbox: null };

/** A transaction as an earlier version stored it: the hash as typed, its own dedupe key. */
async function legacy(id: string, currency: 'BTC' | 'ETH', transactionId: string, extra: object = {}) {
  await CryptoTransaction.collection.insertOne({
    _id: id as never, account_id: scope.accountId, sandbox: null, currency, amount: '0.01', transaction_id: transactionId,
    transaction_source: 'manual_entry', timestamp: new Date(), to_address_id: `addr_${currency}`, to_address: currency === 'BTC' ? BTC_BECH32 : ETH_EIP55,
    wallet_id: 'wall_1', customer_id: 'cust_1', dedupe_key: randomBytes(16).toString('hex'), allocations: [], allocation_due: false,
    created_at: new Date(), updated_at: new Date(), ...extra,
  });
}

describe('planTransactionHashes', () => {
  it('groups spellings per scope, currency and address; reports twins, invalid ids and rewrites', () => {
    const h = hex();
    const row = (id: string, transaction_id: string, over: object = {}) => ({ id, scope: 's', currency: 'ETH' as const, transaction_id, address_key: 'a', ...over });
    const plan = planTransactionHashes([
      row('t1', `0x${h}`),
      row('t2', h.toUpperCase()),
      row('t3', h, { address_key: 'b' }),
      row('t4', h, { scope: 'other' }),
      row('t5', `0x${h}`, { currency: 'BTC' }),
      row('t6', 'tx-1'),
    ]);
    expect(plan.duplicates).toEqual([{ canonical: `0x${h}`, currency: 'ETH', scope: 's', address_key: 'a', ids: ['t1', 't2'] }]);
    expect(plan.rewrite).toEqual([
      { id: 't3', from: h, canonical: `0x${h}` },
      { id: 't4', from: h, canonical: `0x${h}` },
      { id: 't5', from: `0x${h}`, canonical: h },
    ]);
    expect(plan.invalid).toEqual([{ id: 't6', transaction_id: 'tx-1', reason: expect.stringContaining('ETH') }]);
  });
});

describe('auditTransactionHashes', () => {
  it('reports without changing anything, then rewrites only what has no twin and no allocation in flight', async () => {
    const [lone, twin, busy, btc, claimHash] = [hex(), hex(), hex(), hex(), hex()];
    await legacy('trxn_lone', 'ETH', lone);
    await legacy('trxn_watcher', 'ETH', `0x${twin}`);
    await legacy('trxn_manual', 'ETH', twin.toUpperCase());
    await legacy('trxn_busy', 'ETH', `0X${busy}`, { allocation_due: true });
    await legacy('trxn_btc', 'BTC', btc);
    await legacy('trxn_placeholder', 'BTC', 'abc123');
    await PaymentClaim.collection.insertOne({
      _id: 'pymt_claim_legacy' as never, account_id: scope.accountId, sandbox: null, status: 'pending', customer_id: 'cust_1', payment_claim_link_id: 'pcl_1',
      currency: 'BTC', amount: '0.01', transaction_id: `0x${claimHash}`, to_address_id: 'addr_BTC', to_address: BTC_BECH32, created_at: new Date(), updated_at: new Date(),
    });
    const before = await CryptoTransaction.find({}).sort({ _id: 1 }).lean();

    const report = await auditTransactionHashes({ apply: false });
    expect(report.duplicates).toEqual([expect.objectContaining({ canonical: `0x${twin}`, ids: expect.arrayContaining(['trxn_watcher', 'trxn_manual']) })]);
    expect(report.invalid.map((i) => i.id)).toEqual(['trxn_placeholder']);
    expect(report.rewrite.map((r) => r.id).sort()).toEqual(['trxn_busy', 'trxn_lone']);
    expect(report.busy).toEqual(['trxn_busy']);
    expect(report.rewritten).toEqual([]);
    expect(report.claims).toEqual([{ id: 'pymt_claim_legacy', from: `0x${claimHash}`, canonical: claimHash }]);
    expect(await CryptoTransaction.find({}).sort({ _id: 1 }).lean()).toEqual(before);
    expect((await PaymentClaim.findById('pymt_claim_legacy').lean())!.transaction_id).toBe(`0x${claimHash}`);

    // The CLI prints the same report and changes nothing without --apply.
    const env = { ...process.env, MONGODB_URI: db.uri(), LOG_LEVEL: 'silent' };
    const cli = await run('node', ['--import', 'tsx', 'src/cli/index.ts', 'transactions', 'canonical-hashes'], { env });
    expect(cli.stdout).toContain(`duplicate  ETH 0x${twin}`);
    expect(cli.stdout).toMatch(/invalid {4}trxn_placeholder "abc123"/);
    expect(cli.stdout).toContain(`to rewrite trxn_lone ${lone} -> 0x${lone}`);
    expect(cli.stdout).toContain('1 duplicated payments, 1 invalid hashes, 2 transactions and 1 pending claims in another spelling; nothing changed');
    expect(await CryptoTransaction.find({}).sort({ _id: 1 }).lean()).toEqual(before);

    const applied = JSON.parse((await run('node', ['--import', 'tsx', 'src/cli/index.ts', 'transactions', 'canonical-hashes', '--apply', '--json'], { env })).stdout);
    expect(applied.rewritten).toEqual(['trxn_lone']);
    const rewritten = await CryptoTransaction.findById('trxn_lone').lean();
    expect(rewritten).toMatchObject({ transaction_id: `0x${lone}`, dedupe_key: dedupeKey(scope, 'ETH', `0x${lone}`, ETH_EIP55.toLowerCase()) });
    // Twins, placeholders and a transaction still being allocated are left as they were.
    for (const id of ['trxn_watcher', 'trxn_manual', 'trxn_busy', 'trxn_placeholder', 'trxn_btc']) {
      expect(await CryptoTransaction.findById(id).lean()).toEqual(before.find((t) => t._id === id));
    }
    expect((await PaymentClaim.findById('pymt_claim_legacy').lean())!.transaction_id).toBe(claimHash);
  });
});
