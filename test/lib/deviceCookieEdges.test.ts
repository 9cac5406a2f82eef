import { createHmac } from 'node:crypto';
import { DEVICE_COOKIE_TTL_SECONDS, deviceCookie, deviceOf } from '../../src/cryptography/deviceCookie';

describe('console device cookie edges', () => {
  const key = 'k'.repeat(64);
  const now = Date.UTC(2026, 0, 1);

  it('is valid from 60 s before its issue time through exactly its time to live', () => {
    const cookie = deviceCookie(key, 'o@x.io', now, 'device-1');
    expect(deviceOf(key, cookie, 'o@x.io', now - 60_000)).toBe('device-1');
    expect(deviceOf(key, cookie, 'o@x.io', now - 61_000)).toBeNull();
    expect(deviceOf(key, cookie, 'o@x.io', now + DEVICE_COOKIE_TTL_SECONDS * 1000)).toBe('device-1');
    expect(deviceOf(key, cookie, 'o@x.io', now + DEVICE_COOKIE_TTL_SECONDS * 1000 + 1)).toBeNull();
  });

  it('takes a device id of up to 64 characters', () => {
    const id64 = 'a'.repeat(64);
    expect(deviceOf(key, deviceCookie(key, 'o@x.io', now, id64), 'o@x.io', now)).toBe(id64);
    expect(deviceOf(key, deviceCookie(key, 'o@x.io', now, `${id64}a`), 'o@x.io', now)).toBeNull();
  });

  it('refuses an issue time that is not 1 to 12 digits, or an empty part, even when signed', () => {
    const [, id, sig] = deviceCookie(key, 'o@x.io', now, 'device-1').split('.');
    const issued = String(now / 1000);
    expect(deviceOf(key, `${issued}.${id}.${sig}`, 'o@x.io', now)).toBe('device-1');
    expect(deviceOf(key, `.${id}.${sig}`, 'o@x.io', now)).toBeNull();
    expect(deviceOf(key, `${issued}..${sig}`, 'o@x.io', now)).toBeNull();
    expect(deviceOf(key, `${issued}.${id}.`, 'o@x.io', now)).toBeNull();
    // A signed cookie whose issue time is malformed: only the format check refuses it.
    for (const bad of [`+${issued}`, `${issued}e0`, `x${issued}`, `${issued}x`, `0${issued}`.padStart(13, '0')]) {
      const mac = createHmac('sha256', key).update(`console-device\no@x.io\n${bad}\ndevice-1`).digest('base64url');
      expect([bad, deviceOf(key, `${bad}.device-1.${mac}`, 'o@x.io', now)]).toEqual([bad, null]);
    }
    const mac = createHmac('sha256', key).update(`console-device\no@x.io\n0${issued}\ndevice-1`).digest('base64url');
    expect(deviceOf(key, `0${issued}.device-1.${mac}`, 'o@x.io', now)).toBe('device-1');
  });

  it('refuses a cookie with an empty device id, even when signed', () => {
    const cookie = deviceCookie(key, 'o@x.io', now, '');
    expect(cookie.split('.')[1]).toBe('');
    expect(deviceOf(key, cookie, 'o@x.io', now)).toBeNull();
  });
});
