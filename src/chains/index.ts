/** The node client of each watched currency, from configuration (null: the currency is not watched). */
import type { Config } from '../config';
import type { CryptoCurrency } from '../crypto/addresses';
import type { ChainClient } from './types';
import { EthereumRpcClient } from './ethereum';
import { EsploraClient } from './esplora';

export function chainClientFor(config: Config, currency: CryptoCurrency): ChainClient | null {
  if (currency === 'ETH') return config.chains.ETH.rpcUrl ? new EthereumRpcClient(config.chains.ETH.rpcUrl) : null;
  return config.chains.BTC.esploraUrl ? new EsploraClient(config.chains.BTC.esploraUrl) : null;
}

/** Currencies with a configured node. */
export function watchedCurrencies(config: Config): CryptoCurrency[] {
  return (['BTC', 'ETH'] as const).filter((c) => (c === 'ETH' ? config.chains.ETH.rpcUrl : config.chains.BTC.esploraUrl) !== null);
}
