/**
 * Payment URIs a wallet opens with the amount filled in (pure): BIP 21 for BTC
 * (`bitcoin:<address>?amount=<btc>`) and EIP-681 for ETH (`ethereum:<address>?value=<wei>`).
 */
import type { CryptoCurrency } from './addresses';
import { cryptoAmountError, Dec } from './amounts';

const WEI_PER_ETHER = new Dec(10).pow(18);

/** An ETH amount ("0.0326") in wei as a plain integer string ("32600000000000000"); EIP-681 takes wei. */
export function ethToWei(amount: string): string {
  const err = cryptoAmountError('ETH', amount);
  if (err) throw new RangeError(err);
  // At most 18 decimals (checked), so the product is an exact integer.
  return new Dec(amount).mul(WEI_PER_ETHER).toFixed(0);
}

/** A BTC amount as BIP 21 writes it: decimal BTC, no trailing zeros ("0.00200000" -> "0.002"). */
export function bip21Amount(amount: string): string {
  const err = cryptoAmountError('BTC', amount);
  if (err) throw new RangeError(err);
  return new Dec(amount).toFixed();
}

/**
 * The URI for paying `amount` (in the currency's unit) to `address`; without an amount, the
 * address alone (the wallet asks for the amount). Addresses are used as stored: validated
 * bech32/base58 for BTC and hex for ETH need no escaping.
 */
export function paymentUri(currency: CryptoCurrency, address: string, amount: string | null): string {
  if (currency === 'BTC') return amount === null ? `bitcoin:${address}` : `bitcoin:${address}?amount=${bip21Amount(amount)}`;
  return amount === null ? `ethereum:${address}` : `ethereum:${address}?value=${ethToWei(amount)}`;
}
