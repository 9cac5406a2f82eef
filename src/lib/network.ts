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

/** The webhook rule: anything but global unicast is refused (unless private networks are allowed). */
export function isPrivateAddress(ip: string): boolean {
  return !isGlobalUnicast(ip);
}
