import { planTransactionHashes, StoredTransactionHash } from '../../src/cryptocurrency/transactionHashes';

const BTC_TXID = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b';
const ETH_HASH = '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060';
const row = (id: string, transaction_id: string, over: Partial<StoredTransactionHash> = {}): StoredTransactionHash => ({
  id, scope: 'acct_1|', currency: 'BTC', transaction_id, address_key: 'addr1', ...over,
});

describe('planTransactionHashes', () => {
  it('plans nothing for nothing, and nothing for canonical hashes without twins', () => {
    expect(planTransactionHashes([])).toEqual({ rewrite: [], duplicates: [], invalid: [] });
    expect(planTransactionHashes([row('t1', BTC_TXID), row('t2', ETH_HASH, { currency: 'ETH' })])).toEqual({ rewrite: [], duplicates: [], invalid: [] });
  });

  it('rewrites another spelling without a twin, reports twins and invalid hashes', () => {
    const plan = planTransactionHashes([
      row('t1', `0x${BTC_TXID.toUpperCase()}`),
      row('t2', ETH_HASH.slice(2), { currency: 'ETH' }),
      row('t3', ETH_HASH, { currency: 'ETH', address_key: 'addr2' }),
      row('t4', ETH_HASH.toUpperCase().replace('0X', '0x'), { currency: 'ETH', address_key: 'addr2' }),
      row('t5', 'nope'),
      row('t6', 'nope', { currency: 'ETH' }),
    ]);
    expect(plan).toEqual({
      rewrite: [
        { id: 't1', from: `0x${BTC_TXID.toUpperCase()}`, canonical: BTC_TXID },
        { id: 't2', from: ETH_HASH.slice(2), canonical: ETH_HASH },
      ],
      duplicates: [{ canonical: ETH_HASH, currency: 'ETH', scope: 'acct_1|', address_key: 'addr2', ids: ['t3', 't4'] }],
      invalid: [
        { id: 't5', transaction_id: 'nope', reason: 'must be a BTC transaction id: 64 hexadecimal characters' },
        { id: 't6', transaction_id: 'nope', reason: 'must be an ETH transaction hash: 0x followed by 64 hexadecimal characters' },
      ],
    });
  });

  it('groups per scope, currency, hash and address: the same hash elsewhere is no twin', () => {
    const plan = planTransactionHashes([
      row('t1', BTC_TXID),
      row('t2', BTC_TXID, { scope: 'acct_2|' }),
      row('t3', BTC_TXID, { address_key: 'addr2' }),
      row('t4', BTC_TXID.slice(2) + BTC_TXID.slice(0, 2)),
      row('t5', BTC_TXID, { currency: 'ETH' }),
      row('t6', BTC_TXID),
      row('t7', BTC_TXID.toUpperCase()),
    ]);
    expect(plan.duplicates).toEqual([{ canonical: BTC_TXID, currency: 'BTC', scope: 'acct_1|', address_key: 'addr1', ids: ['t1', 't6', 't7'] }]);
    expect(plan.rewrite).toEqual([{ id: 't5', from: BTC_TXID, canonical: `0x${BTC_TXID}` }]);
    expect(plan.invalid).toEqual([]);
  });
});
