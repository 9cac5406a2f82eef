/** Shared set-up for the crypto API and workflow tests. */
import type { Client } from '../support/api';

export const BTC_P2PKH = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
export const BTC_P2SH = '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy';
export const BTC_BECH32 = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
export const BTC_TAPROOT = 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0';
export const BTC_TESTNET_BECH32 = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
export const BTC_TESTNET_P2PKH = 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn';
export const ETH_EIP55 = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
export const ETH_EIP55_2 = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';

let txSeq = 0;
/** A fresh fake transaction hash in its currency's canonical spelling (BTC: 64 hex; ETH: `0x` + 64 hex). */
export function txHash(currency: 'BTC' | 'ETH' = 'BTC'): string {
  txSeq += 1;
  const body = (Date.now().toString(16) + txSeq.toString(16).padStart(8, '0') + Math.random().toString(16).slice(2)).padEnd(64, '0').slice(0, 64);
  return currency === 'ETH' ? `0x${body}` : body;
}

/** A customer with its wallet, a product and a $1-unit price. */
export async function customerWithWallet(api: Client, email = 'payer@x.io') {
  const customer = (await api.post('/v1/customers', { email })).body;
  const wallets = (await api.get('/v1/wallets')).body.wallets as any[];
  const wallet = wallets.find((w) => w.owner_type === 'customer' && w.owner_id === customer.id);
  const accountWallet = wallets.find((w) => w.owner_type === 'account');
  return { customer, wallet, accountWallet };
}

/** An invoice of `amount` USD (one line with an amount override), due on `due`. */
export async function invoiceOf(api: Client, customerId: string, amount: string, due: string) {
  const product = (await api.post('/v1/products', { name: 'Service' })).body;
  const price = (await api.post('/v1/prices', { product_id: product.id, amount: 100 })).body;
  const res = await api.post('/v1/invoices', { customer_id: customerId, due_date: due, line_items: [{ price_id: price.id, amount }] });
  if (res.status !== 201) throw new Error(`invoice create failed: ${JSON.stringify(res.body)}`);
  return res.body;
}
