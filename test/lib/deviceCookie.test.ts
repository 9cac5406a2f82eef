import { DEVICE_COOKIE_TTL_SECONDS, deviceCookie, deviceOf } from '../../src/cryptography/deviceCookie';

describe('console device cookie', () => {
  const key = 'k'.repeat(64);
  const now = Date.UTC(2026, 0, 1);

  it('names its browser for the email it was issued for, with the key it was signed with, until it expires', () => {
    const cookie = deviceCookie(key, 'o@x.io', now, 'device-1');
    expect(deviceOf(key, cookie, 'o@x.io', now + 1000)).toBe('device-1');
    expect(deviceOf(key, cookie, 'other@x.io', now)).toBeNull();
    expect(deviceOf('j'.repeat(64), cookie, 'o@x.io', now)).toBeNull();
    expect(deviceOf(key, cookie, 'o@x.io', now + (DEVICE_COOKIE_TTL_SECONDS + 1) * 1000)).toBeNull();
    expect(deviceCookie(key, 'o@x.io', now)).not.toBe(deviceCookie(key, 'o@x.io', now));
  });

  it('refuses anything altered or malformed', () => {
    const [issued, id, sig] = deviceCookie(key, 'o@x.io', now, 'device-1').split('.');
    for (const bad of [undefined, '', 'x', `${issued}.${id}`, `${issued}.device-2.${sig}`, `${Number(issued) - 1}.${id}.${sig}`, `${issued}.${id}.${sig}x`, `${issued}.${id}.${sig}.more`]) {
      expect([bad, deviceOf(key, bad, 'o@x.io', now)]).toEqual([bad, null]);
    }
  });
});
