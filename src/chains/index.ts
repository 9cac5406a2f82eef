/** The node client of each watched currency, from configuration (null: the currency is not watched). */
import type { Config } from '../config';
import { CryptoCurrency, SUPPORTED_CURRENCIES } from '../cryptocurrency/addresses';
import type { ChainClient } from './types';
import { EthereumRpcClient } from './ethereum';
import { EsploraClient } from './esplora';

const nodeUrlOf = (config: Config, currency: CryptoCurrency): string | null =>
  currency === 'ETH' ? config.chains.ETH.rpcUrl : config.chains.BTC.esploraUrl;

export function chainClientFor(config: Config, currency: CryptoCurrency): ChainClient | null {
  const url = nodeUrlOf(config, currency);
  if (url === null) return null;
  return currency === 'ETH' ? new EthereumRpcClient(url) : new EsploraClient(url);
}

/** Currencies with a configured node. */
export function watchedCurrencies(config: Config): CryptoCurrency[] {
  return SUPPORTED_CURRENCIES.filter((c) => nodeUrlOf(config, c) !== null);
}
