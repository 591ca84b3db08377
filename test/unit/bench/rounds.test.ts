import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../../bench/load.js';
import type { CaseResult } from '../../../bench/report.js';
import { combineRounds, median } from '../../../bench/rounds.js';

function load(requestsPerSecond: number, p99Ms: number, ok = 1000): LoadResult {
  return { seconds: 10, responses: ok, ok, non2xx: 0, socketErrors: 0, timeouts: 0, requestsPerSecond, p50Ms: p99Ms / 3, p99Ms };
}

function round(requestsPerSecond: number, p99Ms: number, extra: Partial<CaseResult> = {}): CaseResult {
  return { name: 'full', description: 'd', ok: true, storeCheck: 'ok', load: load(requestsPerSecond, p99Ms), exit: 0, ...extra };
}

describe('median', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeUndefined();
  });
});

describe('combineRounds', () => {
  it('gives one round back as it is', () => {
    const only = round(100, 5);
    expect(combineRounds([only])).toBe(only);
  });

  it('takes medians of figures and ratios, the p99 range, the largest RSS and summed counts', () => {
    const row = combineRounds([
      round(100, 50, { requestsPerSecondVsBaseline: 0.2, p99VsBaseline: 20, peakRssBytes: 10, stored: 1001 }),
      round(300, 6, { requestsPerSecondVsBaseline: 0.3, p99VsBaseline: 3, peakRssBytes: 30, stored: 1002 }),
      round(200, 7, { requestsPerSecondVsBaseline: 0.25, p99VsBaseline: 3.5, peakRssBytes: 20, stored: 1000 }),
    ]);
    expect(row.load?.requestsPerSecond).toBe(200);
    expect(row.load?.p99Ms).toBe(7);
    expect(row.p99RangeMs).toEqual([6, 50]);
    expect(row.requestsPerSecondVsBaseline).toBe(0.25);
    expect(row.p99VsBaseline).toBe(3.5);
    expect(row.peakRssBytes).toBe(30);
    expect(row.load?.ok).toBe(3000);
    expect(row.storeCheck).toBe('ok in 3 rounds: 3003 stored = 3000 acknowledged + 3 in flight at the stops');
    expect(row.rounds).toHaveLength(3);
    expect(row.failedRounds).toBeUndefined();
  });

  it('names the round whose stored count fell short', () => {
    const row = combineRounds([
      round(100, 5, { stored: 1000 }),
      round(100, 5, { stored: 990, storeCheck: '**LOST 10**: 990 stored, 1000 acknowledged' }),
    ]);
    expect(row.storeCheck).toBe('round 2: **LOST 10**: 990 stored, 1000 acknowledged');
  });

  it('leaves a failed round out of the figures and names it', () => {
    const failed: CaseResult = { name: 'full', description: 'd', ok: false, error: 'server exited', storeCheck: '–' };
    const row = combineRounds([round(100, 5), failed, round(300, 9)]);
    expect(row.ok).toBe(false);
    expect(row.load?.requestsPerSecond).toBe(200);
    expect(row.failedRounds).toEqual([2]);
  });

  it('keeps a case skipped in every round as skipped, not failed', () => {
    const skipped: CaseResult = { name: 'postgres', description: 'd', ok: false, skipped: 'no PostgreSQL', storeCheck: '–' };
    expect(combineRounds([skipped, { ...skipped }])).toBe(skipped);
  });

  it("sums the disk probes' fsyncs and slow ones over the rounds and keeps the slowest", () => {
    const row = combineRounds([
      round(100, 5, { disk: { syncs: 500, slow: 0, maxMs: 3.5 } }),
      round(100, 90, { disk: { syncs: 420, slow: 7, maxMs: 612 } }),
      round(100, 6),
    ]);
    expect(row.disk).toEqual({ syncs: 920, slow: 7, maxMs: 612 });
    expect(combineRounds([round(100, 5), round(100, 5)]).disk).toBeUndefined();
  });

  it('takes the median of the ratios to the case compared with', () => {
    const row = combineRounds([
      round(100, 5, { versus: { name: 'full', requestsPerSecond: 0.7, p99: 1.5 } }),
      round(100, 5, { versus: { name: 'full', requestsPerSecond: 0.8, p99: 1.1 } }),
      round(100, 5, { versus: { name: 'full', requestsPerSecond: 0.9, p99: 1.2 } }),
    ]);
    expect(row.versus).toEqual({ name: 'full', requestsPerSecond: 0.8, p99: 1.2 });
  });
});
