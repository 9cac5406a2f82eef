/**
 * Ethereum over JSON-RPC (ethers): plain ETH transfers to watched addresses, one payment per
 * successful transaction (value > 0, `to` watched, receipt status 1). Contract-internal
 * transfers and tokens are not detected (docs/adr/0415-on-chain-detection.md).
 */
import { formatUnits, JsonRpcProvider } from 'ethers';
import { BlockPayments, BlockRef, ChainClient, ChainPayment, ChainUnavailableError, TxPlacement } from './types';

export class EthereumRpcClient implements ChainClient {
  readonly currency = 'ETH' as const;
  private readonly provider: JsonRpcProvider;

  constructor(rpcUrl: string) {
    // staticNetwork: no chain-id probe before every call, and no retry loop while the node is down.
    this.provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1 });
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new ChainUnavailableError(`ETH node: ${what} failed: ${(err as Error).message}`);
    }
  }

  async tip(): Promise<BlockRef> {
    const block = await this.call('latest block', () => this.provider.getBlock('latest'));
    if (!block || block.hash === null) throw new ChainUnavailableError('ETH node has no latest block');
    return { height: block.number, hash: block.hash };
  }

  async blockHash(height: number): Promise<string | null> {
    const block = await this.call(`block ${height}`, () => this.provider.getBlock(height));
    return block?.hash ?? null;
  }

  async paymentsInBlock(height: number, isWatched: (address: string) => boolean): Promise<BlockPayments> {
    const block = await this.call(`block ${height}`, () => this.provider.getBlock(height, true));
    if (!block || block.hash === null) throw new ChainUnavailableError(`ETH block ${height} is not there (yet)`);
    const ref: BlockRef = { height: block.number, hash: block.hash };
    const payments: ChainPayment[] = [];
    for (const tx of block.prefetchedTransactions) {
      if (!tx.to || tx.value <= 0n || !isWatched(tx.to)) continue;
      const receipt = await this.call(`receipt ${tx.hash}`, () => this.provider.getTransactionReceipt(tx.hash));
      // A reverted transaction moves no ether; a missing receipt means the block was replaced meanwhile.
      if (!receipt) throw new ChainUnavailableError(`ETH receipt of ${tx.hash} is missing (reorg during scan)`);
      if (receipt.status !== 1) continue;
      payments.push({
        txHash: tx.hash.toLowerCase(),
        outputIndex: 0,
        toAddress: tx.to,
        amount: formatUnits(tx.value, 18),
        fromAddress: tx.from ?? null,
        block: ref,
        timestamp: new Date(block.timestamp * 1000),
      });
    }
    return { block: ref, parentHash: block.number === 0 ? null : block.parentHash, payments };
  }

  async placement(txHash: string): Promise<TxPlacement> {
    const receipt = await this.call(`receipt ${txHash}`, () => this.provider.getTransactionReceipt(txHash));
    if (!receipt) return null;
    return { block: { height: receipt.blockNumber, hash: receipt.blockHash } };
  }

  destroy(): void {
    this.provider.destroy();
  }
}
