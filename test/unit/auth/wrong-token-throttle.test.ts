import { describe, expect, it } from 'vitest';
import { addressKey, WrongTokenThrottle } from '../../../src/platform/auth/wrong-token-throttle.js';

describe('WrongTokenThrottle', () => {
  it('lets 5 wrong tokens in a row through, then asks for a wait that doubles up to the cap', () => {
    const throttle = new WrongTokenThrottle({ maxDelayMs: 60_000 });
    const waits = Array.from({ length: 12 }, (_, i) => throttle.wrongToken('192.0.2.1', 1000 + i));
    expect(waits).toEqual([0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 60]);
  });

  it('says how much of the wait is left, and grows it with each wrong token made during it', () => {
    const throttle = new WrongTokenThrottle();
    for (let i = 0; i < 5; i++) throttle.wrongToken('192.0.2.1', 0);
    expect(throttle.wrongToken('192.0.2.1', 0)).toBe(1);
    // 1 s waited: the next wrong token is still over the count, with twice the wait.
    expect(throttle.wrongToken('192.0.2.1', 1000)).toBe(2);
    expect(throttle.wrongToken('192.0.2.1', 1500)).toBe(4);
  });

  it('starts over after a minute without wrong tokens, once the wait is over', () => {
    const throttle = new WrongTokenThrottle();
    for (let i = 0; i < 5; i++) throttle.wrongToken('192.0.2.1', 0);
    expect(throttle.wrongToken('192.0.2.1', 0)).toBe(1);
    expect(throttle.wrongToken('192.0.2.1', 60_001)).toBe(0);
    // Spread out by more than the window, wrong tokens are never throttled.
    for (let i = 2; i < 20; i++) expect(throttle.wrongToken('192.0.2.9', i * 61_000)).toBe(0);
  });

  it('does not start over while a long wait runs', () => {
    const throttle = new WrongTokenThrottle({ firstDelayMs: 120_000, maxDelayMs: 120_000 });
    for (let i = 0; i < 5; i++) throttle.wrongToken('192.0.2.1', 0);
    expect(throttle.wrongToken('192.0.2.1', 0)).toBe(120);
    // Past the window but within the wait: still throttled.
    expect(throttle.wrongToken('192.0.2.1', 90_000)).toBe(120);
  });

  it('keeps addresses apart', () => {
    const throttle = new WrongTokenThrottle();
    for (let i = 0; i < 5; i++) throttle.wrongToken('192.0.2.1', 0);
    expect(throttle.wrongToken('192.0.2.2', 0)).toBe(0);
    expect(throttle.wrongToken('192.0.2.1', 0)).toBe(1);
  });

  it('remembers at most maxAddresses, forgetting the one whose last wrong token is oldest', () => {
    const throttle = new WrongTokenThrottle({ maxAddresses: 100 });
    for (let i = 0; i < 5; i++) throttle.wrongToken('198.51.100.1', i);
    for (let i = 0; i < 10_000; i++) {
      throttle.wrongToken(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 10);
      expect(throttle.size).toBeLessThanOrEqual(100);
      // An address that keeps trying stays remembered.
      if (i % 50 === 0) throttle.wrongToken('192.0.2.1', 10);
    }
    expect(throttle.wrongToken('192.0.2.1', 10)).toBeGreaterThan(0);
    // The quiet one was pushed out, and starts over.
    expect(throttle.wrongToken('198.51.100.1', 10)).toBe(0);
  });
});

describe('addressKey', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['2001:db8:1:2:3:4:5::', '2001:db8:1:2::/64'],
    ['not an address', 'not an address'],
  ])('counts %s as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
