import { Wallet, WalletDoc } from '../../models/wallet';
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { findIn } from '../../models/pushdown';
import { newId, ID_PREFIX } from '../../lib/ids';
import { ApiError } from '../../lib/errors';
import { isDuplicateKey } from '../../models/errors';
import { presentWallet } from '../../presenters/wallet';
import type { Dependencies } from '../../dependencies';
import { recordEvent } from '../writes/events';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import { removeAddressesOfWallets } from './cryptoAddresses';

/** Wallets are never created through the API: accounts and customers get one here. */
export async function createWallet(scope: Scope, ownerType: 'account' | 'customer', ownerId: string): Promise<WalletDoc> {
  const wallet = (await createListed(Wallet, scope, { _id: newId(ID_PREFIX.wallet), ...scopeFilter(scope), owner_type: ownerType, owner_id: ownerId })).toObject() as WalletDoc;
  await recordEvent(scope, 'wallet.created', presentWallet(wallet, []), { idempotencyKey: `wallet.created:${wallet._id}` });
  return wallet;
}

/**
 * The owner's wallet in `scope`, made now unless an earlier attempt made it: a retried create
 * (its owner's id derived from the Idempotency-Key) meets the wallet of an attempt that died,
 * even one whose owner was undone after a failure that had in fact written the wallet. Its
 * `wallet.created` is recorded if that attempt did not get to it (keyed: once).
 */
export async function ensureWallet(scope: Scope, ownerType: 'account' | 'customer', ownerId: string): Promise<WalletDoc> {
  try {
    return await createWallet(scope, ownerType, ownerId);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const existing = await Wallet.findOne({ owner_type: ownerType, owner_id: ownerId, sandbox: scope.sandbox }).lean<WalletDoc>();
    if (!existing || existing.account_id !== scope.accountId) throw err;
    await recordEvent(scope, 'wallet.created', presentWallet(existing, []), { idempotencyKey: `wallet.created:${existing._id}` });
    return existing;
  }
}

/** created_at desc, then id desc: the order of every list. */
const newestFirst = (a: CryptoAddressDoc, b: CryptoAddressDoc) =>
  new Date(b.created_at).getTime() - new Date(a.created_at).getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

async function addressesByWallet(walletIds: string[]): Promise<Map<string, CryptoAddressDoc[]>> {
  const addresses = (await findIn<CryptoAddressDoc>(CryptoAddress, 'wallet_id', walletIds)).sort(newestFirst);
  const byWallet = new Map<string, CryptoAddressDoc[]>();
  for (const a of addresses) {
    const list = byWallet.get(a.wallet_id) ?? [];
    list.push(a);
    byWallet.set(a.wallet_id, list);
  }
  return byWallet;
}

export async function getWallet(scope: Scope, id: string) {
  const wallet = await findInScope<WalletDoc>(Wallet, scope, id);
  if (!wallet) throw ApiError.notFound('Wallet not found', 'id');
  const addresses = (await addressesByWallet([wallet._id])).get(wallet._id) ?? [];
  return presentWallet(wallet, addresses);
}

export async function listWallets(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<WalletDoc>(Wallet, scope, page);
  const addresses = await addressesByWallet(items.map((w) => w._id));
  return { wallets: items.map((w) => presentWallet(w, addresses.get(w._id) ?? [])), pagination };
}

/** Customer delete cascades to the customer's wallet and its addresses. */
export async function deleteCustomerWallet(deps: Dependencies, scope: Scope, customerId: string): Promise<void> {
  const wallets = await Wallet.find({ ...scopeFilter(scope), owner_type: 'customer', owner_id: customerId }).lean<WalletDoc[]>();
  const ids = wallets.map((w) => w._id);
  if (ids.length === 0) return;
  // Through the address delete path: each address takes its claims and transactions with it.
  await removeAddressesOfWallets(deps, scope, ids);
  await Wallet.deleteMany({ _id: { $in: ids } });
  await recountListSlots(Wallet, wallets);
}
