/**
 * Crypto address validation (pure, no I/O; safe to import from Temporal workflows).
 *
 * BTC
 * - base58check (`@scure/base` + SHA-256 from `@noble/hashes`): 21-byte payload, version
 *   0x00 P2PKH / 0x05 P2SH on mainnet, 0x6f P2PKH / 0xc4 P2SH on testnet, signet and regtest.
 * - segwit (BIP-173 / BIP-350): hrp `bc` mainnet, `tb` testnet/signet, `bcrt` regtest;
 *   witness version 0 must be bech32 with a 20-byte (P2WPKH) or 32-byte (P2WSH) program;
 *   versions 1..16 must be bech32m with a 2..40-byte program (v1 + 32 bytes = P2TR).
 *   Upper-case bech32 is accepted (it is valid, e.g. in QR codes); mixed case is not.
 * - network `mainnet` accepts mainnet forms only; network `test` (a sandbox scope) accepts
 *   mainnet, testnet/signet and regtest forms.
 * - canonical: bech32 lowercased, base58 exactly as given (base58 is case-sensitive).
 *
 * ETH
 * - `0x` + 40 hex digits. All-lowercase or all-uppercase hex carries no checksum and is
 *   accepted; mixed case must be a valid EIP-55 checksum (keccak-256). canonical: lowercase,
 *   so that uniqueness is case-insensitive.
 *
 * Surrounding whitespace is trimmed; any whitespace inside is rejected.
 */
import { bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2';
import { keccak_256 } from '@noble/hashes/sha3';

export type CryptoCurrency = 'BTC' | 'ETH';
export type AddressNetworkMode = 'mainnet' | 'test';
/** The network an address belongs to. ETH addresses are the same on every chain: `any`. */
export type AddressNetwork = 'mainnet' | 'testnet' | 'regtest' | 'any';
/**
 * BTC: `p2pkh`, `p2sh`, `p2wpkh`, `p2wsh`, `p2tr`, or `witness_v<n>` for other segwit
 * programs (future versions, valid per BIP-350). ETH: `account`.
 */
export type AddressKind = 'p2pkh' | 'p2sh' | 'p2wpkh' | 'p2wsh' | 'p2tr' | `witness_v${number}` | 'account';

export type AddressValidation =
  | { ok: true; canonical: string; kind: AddressKind; network: AddressNetwork }
  | { ok: false; reason: string };

export const SUPPORTED_CURRENCIES: readonly CryptoCurrency[] = ['BTC', 'ETH'];

export function isSupportedCurrency(c: unknown): c is CryptoCurrency {
  return c === 'BTC' || c === 'ETH';
}

const base58check = createBase58check(sha256);

const BASE58_VERSIONS: Record<number, { kind: 'p2pkh' | 'p2sh'; network: 'mainnet' | 'testnet' }> = {
  0x00: { kind: 'p2pkh', network: 'mainnet' },
  0x05: { kind: 'p2sh', network: 'mainnet' },
  0x6f: { kind: 'p2pkh', network: 'testnet' },
  0xc4: { kind: 'p2sh', network: 'testnet' },
};

const SEGWIT_HRPS: Record<string, 'mainnet' | 'testnet' | 'regtest'> = {
  bc: 'mainnet',
  tb: 'testnet',
  bcrt: 'regtest',
};

const fail = (reason: string): AddressValidation => ({ ok: false, reason });

function accepts(mode: AddressNetworkMode, network: AddressNetwork): boolean {
  return mode === 'test' || network === 'mainnet' || network === 'any';
}

const notOnMainnet = (network: string) =>
  fail(`${network} address not accepted here: only mainnet addresses are accepted outside a sandbox`);

function validateSegwit(address: string, mode: AddressNetworkMode): AddressValidation {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) {
    return fail('bech32 address must not mix upper and lower case');
  }
  const lower = address.toLowerCase();
  const sep = lower.lastIndexOf('1');
  const hrp = lower.slice(0, sep);
  const network = SEGWIT_HRPS[hrp];
  if (!network) return fail(`unknown bech32 prefix "${hrp}"`);
  if (lower.length > 90) return fail('bech32 address too long');
  // The witness version decides which checksum (bech32 or bech32m) must be used, so try both.
  const asBech32 = bech32.decodeUnsafe(lower, 90);
  const asBech32m = asBech32 ? undefined : bech32m.decodeUnsafe(lower, 90);
  const decoded = asBech32 ?? asBech32m;
  if (!decoded) return fail('invalid bech32 checksum or characters');
  const words = decoded.words;
  if (words.length === 0) return fail('bech32 address has no witness program');
  const version = words[0];
  if (version > 16) return fail(`invalid witness version ${version}`);
  const program = bech32.fromWordsUnsafe(words.slice(1));
  if (!program) return fail('invalid witness program padding');
  if (program.length < 2 || program.length > 40) return fail(`invalid witness program length ${program.length}`);
  if (version === 0) {
    if (!asBech32) return fail('witness version 0 must use bech32, not bech32m');
    if (program.length !== 20 && program.length !== 32) return fail(`invalid witness v0 program length ${program.length}`);
  } else if (!asBech32m) {
    return fail(`witness version ${version} must use bech32m (BIP-350), not bech32`);
  }
  if (!accepts(mode, network)) return notOnMainnet(network);
  const kind: AddressKind =
    version === 0 ? (program.length === 20 ? 'p2wpkh' : 'p2wsh') : version === 1 && program.length === 32 ? 'p2tr' : `witness_v${version}`;
  return { ok: true, canonical: lower, kind, network };
}

function validateBase58(address: string, mode: AddressNetworkMode): AddressValidation {
  if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(address)) return fail('not a valid base58 or bech32 Bitcoin address');
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    return fail('invalid base58check checksum');
  }
  if (payload.length !== 21) return fail('invalid base58 address payload length');
  const v = BASE58_VERSIONS[payload[0]];
  if (!v) return fail(`unknown base58 address version 0x${payload[0].toString(16).padStart(2, '0')}`);
  if (!accepts(mode, v.network)) return notOnMainnet(v.network);
  return { ok: true, canonical: address, kind: v.kind, network: v.network };
}

function validateBtc(address: string, mode: AddressNetworkMode): AddressValidation {
  if (/^(bc|tb|bcrt)1/i.test(address)) return validateSegwit(address, mode);
  return validateBase58(address, mode);
}

const utf8 = new TextEncoder();

function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** EIP-55 mixed-case checksum form of a 40-hex-digit address (with `0x`). */
export function toChecksumAddress(address: string): string {
  const lower = address.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{40}$/.test(lower)) throw new TypeError('expected 0x + 40 hex digits');
  const hash = toHex(keccak_256(utf8.encode(lower)));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i];
  return out;
}

function validateEth(address: string): AddressValidation {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return fail('ETH address must be 0x followed by 40 hex characters');
  const body = address.slice(2);
  const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
  if (mixed && toChecksumAddress(address) !== address) return fail('invalid EIP-55 checksum');
  return { ok: true, canonical: address.toLowerCase(), kind: 'account', network: 'any' };
}

export function validateAddress(currency: CryptoCurrency, address: string, network: AddressNetworkMode): AddressValidation {
  if (typeof address !== 'string') return fail('address must be a string');
  const a = address.trim();
  if (a === '') return fail('address is blank');
  if (/\s/.test(a)) return fail('address must not contain whitespace');
  if (a.length > 120) return fail('address too long');
  if (currency === 'BTC') return validateBtc(a, network);
  if (currency === 'ETH') return validateEth(a);
  return fail(`unsupported currency ${String(currency)}`);
}

export interface Explorer {
  name: string;
  url: string;
}

/**
 * Block explorer link for an address. BTC: mempool.space; ETH: Etherscan. In a sandbox the
 * testnet explorers are used (mempool.space/testnet, sepolia.etherscan.io), except that a
 * BTC address that is recognisably a mainnet form links to the mainnet explorer (a testnet
 * explorer cannot show it). The `name` stays `mempool.space` / `Etherscan`.
 */
export function explorerFor(currency: CryptoCurrency, address: string, sandbox: boolean): Explorer {
  const a = encodeURIComponent(address);
  if (currency === 'BTC') {
    let testnet = sandbox;
    if (sandbox) {
      const v = validateAddress('BTC', address, 'test');
      if (v.ok && v.network === 'mainnet') testnet = false;
    }
    return { name: 'mempool.space', url: testnet ? `https://mempool.space/testnet/address/${a}` : `https://mempool.space/address/${a}` };
  }
  return { name: 'Etherscan', url: sandbox ? `https://sepolia.etherscan.io/address/${a}` : `https://etherscan.io/address/${a}` };
}
