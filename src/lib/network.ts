/**
 * Which addresses a webhook may be delivered to: global unicast only, classified by ipaddr.js
 * (its special-purpose ranges follow the IANA registries) rather than a hand-kept list.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// IANA's global unicast space; ipaddr.js calls every address outside its special ranges "unicast".
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

function bare(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}

/** A strict IPv4 dotted quad or IPv6 literal (brackets allowed); host names are not. */
export function isIpLiteral(host: string): boolean {
  return isIP(bare(host)) !== 0;
}

/**
 * True only for a globally routable unicast address. Private, loopback, link-local, CGNAT,
 * documentation, multicast and reserved space, and every translation or tunnel form that can
 * embed another address (IPv4-mapped, NAT64, 6to4, Teredo), are not; neither is a non-address.
 */
export function isGlobalUnicast(ip: string): boolean {
  const host = bare(ip);
  if (!isIpLiteral(host)) return false;
  const addr = ipaddr.parse(host);
  if (addr.range() !== 'unicast') return false;
  return addr.kind() === 'ipv4' || (addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

/** A listen address reachable only from this machine: `localhost` or a loopback IP. */
export function isLoopbackHost(host: string): boolean {
  const h = bare(host).toLowerCase();
  if (h === 'localhost') return true;
  if (!isIpLiteral(h)) return false;
  const addr = ipaddr.process(h); // ::ffff:127.0.0.1 counts as 127.0.0.1
  return addr.range() === 'loopback';
}

/**
 * The port a webhook URL connects to is 443 or one the operator listed (WEBHOOK_ALLOWED_PORTS):
 * otherwise the service would probe any `host:port` and show the merchant its answer.
 * `allowed` null: any port (where private networks are allowed, for local receivers).
 */
export function isAllowedWebhookPort(url: URL, allowed: readonly number[] | null): boolean {
  if (allowed === null) return true;
  const port = url.port === '' ? 443 : Number(url.port);
  return port === 443 || allowed.includes(port);
}

/** The ports a webhook may use besides 443: any (null) where private networks are allowed for local runs. */
export function webhookPortRule(config: { webhookAllowPrivateNetworks: boolean; webhookAllowedPorts: readonly number[] }): readonly number[] | null {
  return config.webhookAllowPrivateNetworks ? null : config.webhookAllowedPorts;
}

/** The webhook rule: anything but global unicast is refused (unless private networks are allowed). */
export function isPrivateAddress(ip: string): boolean {
  return !isGlobalUnicast(ip);
}

/**
 * The key a client's requests are counted under: its IPv4 address (an IPv4-mapped IPv6 one
 * too), or its IPv6 /64. One host usually holds a whole /64, so keying on the full address
 * would give it 2^64 fresh counters. Anything that is not an address is kept as given.
 */
export function clientKey(ip: string): string {
  const host = bare(ip);
  if (isIP(host) !== 6) return host;
  const addr = ipaddr.process(host);
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${(addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
}

/** What `TRUST_PROXY=true` has always meant: the proxy runs on this machine. */
export const LOOPBACK_PROXIES = ['127.0.0.0/8', '::1/128'];

/**
 * The proxies of a `TRUST_PROXY` value, as CIDR ranges (an address alone is its /32 or /128):
 * `false` or empty, none; `true`, loopback; else a comma-separated list of addresses or
 * CIDR ranges. Null when an entry is neither.
 */
export function parseProxyList(raw: string): string[] | null {
  const v = raw.trim().toLowerCase();
  if (['', 'false', '0', 'no', 'off'].includes(v)) return [];
  if (['true', '1', 'yes', 'on'].includes(v)) return [...LOOPBACK_PROXIES];
  const ranges: string[] = [];
  for (const entry of v.split(',').map((e) => e.trim())) {
    const [addrPart = '', bits, ...more] = entry.split('/');
    if (bits !== undefined && more.length === 0 && isIpLiteral(addrPart) && /^\d{1,3}$/.test(bits) && ipaddr.isValidCIDR(entry)) {
      const [addr, bits] = ipaddr.parseCIDR(entry);
      ranges.push(`${addr.toString()}/${bits}`);
    } else if (isIpLiteral(entry)) {
      const addr = ipaddr.parse(bare(entry));
      ranges.push(`${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`);
    } else {
      return null;
    }
  }
  return ranges;
}

/** Matches addresses against a list of CIDR ranges (from parseProxyList); IPv4-mapped IPv6 counts as IPv4. */
export function proxyMatcher(ranges: readonly string[]): (ip: string) => boolean {
  const parsed = ranges.map((r) => ipaddr.parseCIDR(r));
  return (ip) => {
    const host = bare(ip);
    if (parsed.length === 0 || !isIpLiteral(host)) return false;
    const addr = ipaddr.process(host);
    return parsed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  };
}

/**
 * The client of a request: the TCP peer, unless the peer is a trusted proxy; then the rightmost
 * `X-Forwarded-For` entry that is not a trusted proxy (each proxy appends the address it got the
 * request from; entries left of that one are the client's to write). An entry that is not an
 * address stops the walk at the proxy that wrote it, so garbage cannot make fresh keys.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: (ip: string) => boolean): string {
  let client = peer;
  if (!trusted(client)) return client;
  const hops = (forwardedFor ?? '').split(',').map((h) => h.trim()).filter((h) => h !== '');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!isIpLiteral(hop)) return client;
    client = bare(hop);
    if (!trusted(client)) return client;
  }
  return client;
}
