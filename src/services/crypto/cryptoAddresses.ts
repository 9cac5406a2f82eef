/**
 * Crypto addresses: checksum-validated per currency and network (sandbox scopes also take
 * testnet/regtest forms), unique per (scope, currency, canonical form), deleted with their
 * claims and transactions (spec cascade table).
 */
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { CryptoTransaction } from '../../models/cryptoTransaction';
import { PaymentClaim } from '../../models/paymentClaim';
import { Wallet, WalletDoc } from '../../models/wallet';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { isDuplicateKey } from '../../models/errors';
import { newId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { CryptoCurrency, isSupportedCurrency, validateAddress } from '../../cryptocurrency/addresses';
import { presentCryptoAddress } from '../../presenters/cryptoAddress';
import { markWatchedAddressesChanged } from './watchedAddresses';
import type { Dependencies } from '../../dependencies';
import { recordEvent } from '../writes/events';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import { findIn } from '../../models/pushdown';
import { rollupsChanged } from '../reports/reportRollups';

export interface CryptoAddressInput {
  wallet_id: string;
  currency_code?: string;
  /** Quick-start alias of `currency_code`. */
  currency?: string;
  address: string;
}

/** `currency_code` (or its alias `currency`) as a supported currency, else the spec's 404. */
export function requireCurrency(code: string | undefined, param = 'currency_code'): CryptoCurrency {
  if (code === undefined) throw ApiError.missing(param);
  if (!isSupportedCurrency(code)) throw ApiError.notFound(`Currency not found: ${code}`, param);
  return code;
}

export async function findCryptoAddress(scope: Scope, id: string, param = 'id', message = 'Crypto address not found'): Promise<CryptoAddressDoc> {
  const address = await findInScope<CryptoAddressDoc>(CryptoAddress, scope, id);
  if (!address) throw ApiError.notFound(message, param);
  return address;
}

/** Under an Idempotency-Key, a retry after a request that died after its write finds that address (services/writes/creation.ts) rather than calling it in use. */
export async function createCryptoAddress(scope: Scope, input: CryptoAddressInput, opts: CreateOptions = {}) {
  const wallet = await findInScope<WalletDoc>(Wallet, scope, input.wallet_id);
  if (!wallet) throw ApiError.notFound('Wallet not found', 'wallet_id');
  const currency = requireCurrency(input.currency_code ?? input.currency);
  const checked = validateAddress(currency, input.address, scope.sandbox === null ? 'mainnet' : 'test');
  if (!checked.ok) throw ApiError.addressInvalid(`Address is not a valid ${currency} address: ${checked.reason}`);
  const id = createdId(ID_PREFIX.cryptoAddress, opts);
  const doc = (await earlierAttempt<CryptoAddressDoc>(CryptoAddress, scope, id, opts)) ?? (await insertAddress(scope, {
    _id: id,
    wallet_id: wallet._id,
    customer_id: wallet.owner_type === 'customer' ? wallet.owner_id : null,
    currency,
    address: input.address.trim(),
    address_key: checked.canonical,
  }));
  await markWatchedAddressesChanged(currency);
  const out = presentCryptoAddress(doc);
  await recordEvent(scope, 'crypto_address.created', out, { idempotencyKey: `crypto_address.created:${doc._id}` });
  return out;
}

async function insertAddress(scope: Scope, fields: Omit<CryptoAddressDoc, 'account_id' | 'sandbox' | 'created_at' | 'updated_at'>): Promise<CryptoAddressDoc> {
  try {
    return (await createListed(CryptoAddress, scope, { ...fields, ...scopeFilter(scope) })).toObject() as CryptoAddressDoc;
  } catch (err) {
    if (isDuplicateKey(err)) throw ApiError.invalid('Address is already in use for this currency in your account', 'address', { address: ['is already in use for this currency'] });
    throw err;
  }
}

export async function getCryptoAddress(scope: Scope, id: string) {
  return presentCryptoAddress(await findCryptoAddress(scope, id));
}

export async function listCryptoAddresses(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<CryptoAddressDoc>(CryptoAddress, scope, page);
  return { crypto_addresses: items.map(presentCryptoAddress), pagination };
}

/** Deletes addresses with their payment claims and transaction records, one `crypto_address.deleted` each. */
export async function removeAddresses(deps: Dependencies, scope: Scope, addresses: CryptoAddressDoc[]): Promise<void> {
  for (const address of addresses) {
    await PaymentClaim.deleteMany({ to_address_id: address._id });
    await CryptoTransaction.deleteMany({ to_address_id: address._id });
    await rollupsChanged(deps, scope, 'collections');
    await CryptoAddress.deleteOne({ _id: address._id });
    await markWatchedAddressesChanged(address.currency);
    await recountListSlots(CryptoAddress, [address]);
    await recordEvent(scope, 'crypto_address.deleted', presentCryptoAddress(address));
  }
}

export async function deleteCryptoAddress(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  await removeAddresses(deps, scope, [await findCryptoAddress(scope, id)]);
}

/** The customer wallet delete path (wallets.ts): every address of those wallets, with its claims and transactions. */
export async function removeAddressesOfWallets(deps: Dependencies, scope: Scope, walletIds: string[]): Promise<void> {
  if (walletIds.length === 0) return;
  const addresses = await findIn<CryptoAddressDoc>(CryptoAddress, 'wallet_id', walletIds);
  await removeAddresses(deps, scope, addresses.filter((a) => a.account_id === scope.accountId && (a.sandbox ?? null) === scope.sandbox));
}
