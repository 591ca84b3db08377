import { describe, expect, it } from 'vitest';
import { Throttle } from '../../../src/forwarding/circuit/throttle.js';

describe('the slow-down after a 429 or 503', () => {
  it('halves a configured rate limit, paces attempts by it, and grows back one a second up to the limit', () => {
    const t = new Throttle(20);
    expect(t.current()).toBeUndefined();
    expect(t.msUntilNext(0)).toBe(0);
    t.started(0);
    expect(t.throttled(0, 10)).toBe(true);
    expect(t.current()).toBe(10);
    expect(t.msUntilNext(10)).toBe(100);
    t.started(110);
    expect(t.msUntilNext(110)).toBe(100);
    // Attempts that were under way when it halved do not halve it again.
    expect(t.throttled(5, 120)).toBe(false);
    expect(t.current()).toBe(10);
    // One request a second more, once per second of successes.
    expect(t.succeeded(500)).toBe(false);
    expect(t.succeeded(1010)).toBe(true);
    expect(t.current()).toBe(11);
    expect(t.succeeded(1500)).toBe(false);
    let now = 1010;
    for (let i = 0; i < 8; i++) t.succeeded((now += 1000));
    expect(t.current()).toBe(19);
    t.succeeded((now += 1000));
    // Back at its rateLimit: the bucket alone paces it again.
    expect(t.current()).toBeUndefined();
  });

  it('never goes below one request a second', () => {
    const t = new Throttle(4);
    let now = 0;
    for (let i = 0; i < 6; i++) t.throttled((now += 10), now);
    expect(t.current()).toBe(1);
    expect(t.msUntilNext(now)).toBe(1000);
  });

  it('without a rate limit, starts from the rate observed, and drops the limit once grown back past it', () => {
    const t = new Throttle(undefined);
    for (let i = 0; i < 8; i++) t.started(1000 + i * 100);
    expect(t.throttled(1750, 1800)).toBe(true);
    expect(t.current()).toBe(4);
    let now = 1800;
    for (let i = 0; i < 3; i++) t.succeeded((now += 1000));
    expect(t.current()).toBe(7);
    t.succeeded((now += 1000));
    expect(t.current()).toBeUndefined();
  });
});
