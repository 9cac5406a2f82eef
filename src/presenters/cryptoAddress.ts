import { CryptoAddressDoc } from '../models/cryptoAddress';
import { explorerFor } from '../cryptocurrency/addresses';
import { iso } from './common';

export function presentCryptoAddress(a: CryptoAddressDoc) {
  return {
    id: a._id,
    object: 'crypto_address' as const,
    address: a.address,
    currency: a.currency,
    wallet_id: a.wallet_id,
    explorer: explorerFor(a.currency, a.address, (a.sandbox ?? null) !== null),
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at),
  };
}
