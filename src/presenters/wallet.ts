import { WalletDoc } from '../models/wallet';
import { CryptoAddressDoc } from '../models/cryptoAddress';
import { iso } from './common';

export function presentWallet(w: WalletDoc, addresses: CryptoAddressDoc[]) {
  return {
    id: w._id,
    object: 'wallet' as const,
    owner_type: w.owner_type,
    owner_id: w.owner_id,
    crypto_addresses: addresses.map((a) => ({ id: a._id, address: a.address, currency: a.currency, created_at: iso(a.created_at) })),
    crypto_address_count: addresses.length,
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  };
}
