import { isGlobalUnicast, isIpLiteral, isPrivateAddress } from '../../src/lib/network';

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
