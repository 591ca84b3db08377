import { describe, expect, it } from 'vitest';
import { ReadinessCheck } from '../../../src/inbox/readiness.js';

describe('ReadinessCheck', () => {
  const clocked = (
    results: Array<() => Promise<void>>,
  ): { check: ReadinessCheck; calls: () => number; at: (ms: number) => void } => {
    let now = 0;
    let calls = 0;
    const check = new ReadinessCheck(
      () => {
        const next = results[Math.min(calls, results.length - 1)] ?? (() => Promise.resolve());
        calls++;
        return next();
      },
      1000,
      () => now,
    );
    return {
      check,
      calls: () => calls,
      at: (ms) => {
        now = ms;
      },
    };
  };

  it('runs the probe once for every caller within maxAgeMs, a running probe included', async () => {
    let finish = (): void => undefined;
    const slow = (): Promise<void> =>
      new Promise((resolve) => {
        finish = resolve;
      });
    const { check, calls, at } = clocked([slow]);
    const waiting = [check.check(), check.check()];
    at(999);
    waiting.push(check.check());
    expect(calls()).toBe(1);
    finish();
    await Promise.all(waiting);
    expect(calls()).toBe(1);
  });

  it('probes again once maxAgeMs have passed since the last probe began', async () => {
    const { check, calls, at } = clocked([() => Promise.resolve()]);
    await check.check();
    at(1000);
    await check.check();
    expect(calls()).toBe(2);
  });

  it('gives a failure to every caller until the next probe, and then the new result', async () => {
    const { check, calls, at } = clocked([() => Promise.reject(new Error('full')), () => Promise.resolve()]);
    await expect(check.check()).rejects.toThrow('full');
    at(500);
    await expect(check.check()).rejects.toThrow('full');
    at(1500);
    await expect(check.check()).resolves.toBeUndefined();
    expect(calls()).toBe(2);
  });
});
