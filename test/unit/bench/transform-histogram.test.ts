import { describe, expect, it } from 'vitest';
import { quantile, runBuckets } from '../../../bench/transform-histogram.js';

/** The forwarding bench's transform run cost, read off the metrics histogram. */
describe('the transform run histogram', () => {
  const text = [
    '# HELP reception_transform_run_duration_seconds Time one transform run took in its sandbox, by transform.',
    'reception_transform_run_duration_seconds_bucket{le="0.0001",transform="a"} 10',
    'reception_transform_run_duration_seconds_bucket{le="0.00025",transform="a"} 90',
    'reception_transform_run_duration_seconds_bucket{le="0.001",transform="a"} 100',
    'reception_transform_run_duration_seconds_bucket{le="+Inf",transform="a"} 100',
    'reception_transform_run_duration_seconds_bucket{le="0.0001",transform="b"} 0',
    'reception_transform_run_duration_seconds_bucket{le="0.00025",transform="b"} 0',
    'reception_transform_run_duration_seconds_bucket{le="0.001",transform="b"} 100',
    'reception_transform_run_duration_seconds_bucket{le="+Inf",transform="b"} 100',
    'reception_transform_run_duration_seconds_sum{transform="a"} 0.02',
  ].join('\n');

  it('sums the buckets of every transform by bound', () => {
    expect(runBuckets(text)).toEqual([
      { le: 0.0001, count: 10 },
      { le: 0.00025, count: 90 },
      { le: 0.001, count: 200 },
      { le: Infinity, count: 200 },
    ]);
  });

  it('interpolates a quantile within the bucket that holds it', () => {
    const buckets = runBuckets(text);
    // Rank 20 of 200: the 10th of 80 runs between 100 and 250 µs.
    const p10 = quantile(buckets, 0.1);
    expect(p10.bound).toBe(0.00025);
    expect(p10.value * 1e6).toBeCloseTo(100 + (150 * 10) / 80, 6);
    // Rank 100: the 10th of 110 runs between 250 µs and 1 ms.
    const p50 = quantile(buckets, 0.5);
    expect(p50.bound).toBe(0.001);
    expect(p50.value * 1e6).toBeCloseTo(250 + (750 * 10) / 110, 6);
    // Rank 198: the 108th of 110 runs between 250 µs and 1 ms.
    const p99 = quantile(buckets, 0.99);
    expect(p99.bound).toBe(0.001);
    expect(p99.value * 1e6).toBeCloseTo(250 + (750 * 108) / 110, 6);
  });
});
