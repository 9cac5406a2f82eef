import { clientAddress, clientKey, isGlobalUnicast, isIpLiteral, isPrivateAddress, LOOPBACK_PROXIES, parseProxyList, proxyMatcher } from '../../src/lib/network';

describe('webhook target addresses: global unicast only', () => {
  it('refuses private, loopback, link-local, reserved and special-purpose space', () => {
    for (const ip of ['127.0.0.1', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '240.0.0.1', '192.0.0.1', '192.0.2.1', '198.18.0.1', '198.51.100.1', '203.0.113.1',
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd12:3456::1', 'fc00::1', 'fec0::1', 'ff02::1', '[::1]', '2001:db8::1', '4000::1',
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1']) {
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, true]);
    }
  });

  it('refuses the forms the hand-written ranges missed: they embed or relay to other addresses', () => {
    for (const ip of [
      '::ffff:0:0', '::ffff:8.8.8.8', // IPv4-mapped, ::ffff:0:0/96
      '64:ff9b:1::a00:1', '64:ff9b:1::808:808', // local-use NAT64, 64:ff9b:1::/48
      '2002:7f00:1::1', '2002:808:808::1', // 6to4, 2002::/16
      '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo, 2001::/32
      '192.88.99.1', // 6to4 relay anycast, 192.88.99.0/24
    ]) {
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, true]);
    }
  });

  it('accepts global unicast', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '192.88.98.1', '2606:4700:4700::1111', '[2a00:1450:4001:80b::200e]']) {
      expect([ip, isGlobalUnicast(ip)]).toEqual([ip, true]);
    }
  });

  it('treats anything that is not a strict IP literal as not an address (and so not routable)', () => {
    for (const host of ['example.com', '127.1', '0x7f.0.0.1', '2130706433', '', '1.2.3.4.5']) {
      expect([host, isIpLiteral(host), isGlobalUnicast(host)]).toEqual([host, false, false]);
    }
    expect(isIpLiteral('[2606:4700::1]')).toBe(true);
  });
});

describe('client addresses behind proxies', () => {
  it('keys an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(clientKey('2a00:1450:4001:80b::1')).toBe('2a00:1450:4001:80b::/64');
    expect(clientKey('2a00:1450:4001:80b:ffff:1:2:3')).toBe('2a00:1450:4001:80b::/64');
    expect(clientKey('2a00:1450:4001:80c::1')).toBe('2a00:1450:4001:80c::/64');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('')).toBe('');
  });

  it('reads TRUST_PROXY: false, true (loopback), or a list of addresses and CIDR ranges', () => {
    expect(parseProxyList('')).toEqual([]);
    expect(parseProxyList('false')).toEqual([]);
    expect(parseProxyList('true')).toEqual(LOOPBACK_PROXIES);
    expect(parseProxyList(' 10.0.0.0/8, 192.0.2.5 ,2001:db8::/32,::1')).toEqual(['10.0.0.0/8', '192.0.2.5/32', '2001:db8::/32', '::1/128']);
    for (const bad of ['yes please', '10.0.0.0/33', '10.0.0.0/', '127.1', 'proxy.internal', '10.0.0.1,,10.0.0.2', '10.0.0.0/8/1']) {
      expect([bad, parseProxyList(bad)]).toEqual([bad, null]);
    }
  });

  it('takes the rightmost X-Forwarded-For entry that is not a trusted proxy, and only from a trusted peer', () => {
    const trusted = proxyMatcher(['10.0.0.0/8', '::1/128']);
    // Not from a trusted proxy: the header is the client's own writing.
    expect(clientAddress('198.51.100.1', '203.0.113.9', trusted)).toBe('198.51.100.1');
    // One proxy: the entry it appended.
    expect(clientAddress('10.0.0.2', '1.1.1.1, 203.0.113.9', trusted)).toBe('203.0.113.9');
    // Two proxies in the list (a load balancer behind the TLS proxy): past both.
    expect(clientAddress('10.0.0.2', '1.1.1.1, 203.0.113.9, 10.0.0.3', trusted)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:10.0.0.2', '2001:db8::5', trusted)).toBe('2001:db8::5');
    expect(clientAddress('::1', '[2001:db8::5]', trusted)).toBe('2001:db8::5');
    // No header, or only proxies: the furthest proxy.
    expect(clientAddress('10.0.0.2', undefined, trusted)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', '10.0.0.9', trusted)).toBe('10.0.0.9');
    // Garbage stops at the proxy that passed it on: no fresh key per request.
    expect(clientAddress('10.0.0.2', '203.0.113.9, unknown', trusted)).toBe('10.0.0.2');
    // Nothing trusted (TRUST_PROXY=false): always the peer.
    expect(clientAddress('10.0.0.2', '203.0.113.9', proxyMatcher([]))).toBe('10.0.0.2');
  });
});
