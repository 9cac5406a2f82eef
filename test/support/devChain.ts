/**
 * A local Ethereum development chain (ganache, from npm) on a loopback port: funded accounts,
 * one block per transaction, and RPC to mine, snapshot and revert (a reorg).
 */
import { JsonRpcProvider, parseEther, Wallet } from 'ethers';

// ganache ships as a webpack bundle without types.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const ganache = require('ganache');

export interface DevChain {
  url: string;
  provider: JsonRpcProvider;
  /** Sends `eth` from the first funded account; resolves once mined (its own block). */
  send(to: string, eth: string): Promise<{ hash: string; from: string; blockNumber: number }>;
  mine(blocks?: number): Promise<void>;
  snapshot(): Promise<string>;
  /** Back to the snapshot: the blocks since are gone (with their transactions). */
  revert(id: string): Promise<void>;
  height(): Promise<number>;
  close(): Promise<void>;
}

/** A fresh EIP-55 address nobody holds the key of (the service only receives). */
export const newEthAddress = () => Wallet.createRandom().address;

export async function startDevChain(): Promise<DevChain> {
  const server = ganache.server({ logging: { quiet: true }, wallet: { deterministic: true }, chain: { chainId: 1337 }, miner: { instamine: 'eager' } });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${server.address().port}`;
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true });
  const [funded] = (await provider.send('eth_accounts', [])) as string[];
  const signer = await provider.getSigner(funded);
  return {
    url,
    provider,
    async send(to, eth) {
      const tx = await signer.sendTransaction({ to, value: parseEther(eth) });
      const receipt = await tx.wait();
      return { hash: tx.hash, from: tx.from, blockNumber: receipt!.blockNumber };
    },
    async mine(blocks = 1) {
      await provider.send('evm_mine', [{ blocks }]);
    },
    snapshot: () => provider.send('evm_snapshot', []),
    async revert(id) {
      if (!(await provider.send('evm_revert', [id]))) throw new Error(`evm_revert ${id} refused`);
    },
    // Raw RPC: ethers caches getBlockNumber() for a moment.
    height: async () => Number(await provider.send('eth_blockNumber', [])),
    async close() {
      provider.destroy();
      await server.close();
    },
  };
}
