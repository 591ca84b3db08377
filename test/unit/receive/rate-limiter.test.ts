import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/receive/rate-limiter.js';

describe('RateLimiter', () => {
  it('lets `requests` through at once, then one per interval, and says how long to wait in whole seconds', () => {
    const limiter = new RateLimiter(2, 10, 0);
    expect(limiter.take(0)).toBe(0);
    expect(limiter.take(0)).toBe(0);
    expect(limiter.take(0)).toBe(5);
    expect(limiter.take(4_999)).toBe(1);
    expect(limiter.take(5_000)).toBe(0);
    expect(limiter.take(5_000)).toBe(5);
  });

  it('never asks for less than a second', () => {
    const limiter = new RateLimiter(1000, 1, 0);
    for (let i = 0; i < 1000; i++) expect(limiter.take(0)).toBe(0);
    expect(limiter.take(0)).toBe(1);
  });

  it('limits at the shortest interval the config allows (a millisecond)', () => {
    const limiter = new RateLimiter(1, 0.001, 0);
    expect(limiter.take(0)).toBe(0);
    expect(limiter.take(0)).toBe(1);
    expect(limiter.take(0)).toBe(1);
    expect(limiter.take(1)).toBe(0);
  });

  it('tells the longest wait the config allows (a year) in digits, as Retry-After needs', () => {
    const limiter = new RateLimiter(1, 31_536_000, 0);
    expect(limiter.take(0)).toBe(0);
    expect(String(limiter.take(0))).toBe('31536000');
  });
});
