/**
 * The transform's own run cost in a forwarding bench: read from Reception's
 * `/metrics` (`reception_transform_run_duration_seconds`, CONTRACT 10), its
 * quantiles interpolated linearly within the histogram's buckets (so a
 * figure is only as fine as the bucket it falls in).
 */

export interface TransformRunCost {
  runs: number;
  p50Us: number;
  p99Us: number;
  /** The buckets' upper bounds that hold p50 and p99, in µs: how coarse the figures are. */
  p50BucketUs: number;
  p99BucketUs: number;
}

const BUCKET = /^reception_transform_run_duration_seconds_bucket\{(?:[^}]*,)?le="([^"]+)"(?:,[^}]*)?\} (\S+)$/;

/** The cumulative buckets of every transform in the metrics text, summed per bound. */
export function runBuckets(text: string): Array<{ le: number; count: number }> {
  const byBound = new Map<number, number>();
  for (const line of text.split('\n')) {
    const match = BUCKET.exec(line);
    if (match === null) continue;
    const le = match[1] === '+Inf' ? Infinity : Number(match[1]);
    byBound.set(le, (byBound.get(le) ?? 0) + Number(match[2]));
  }
  return [...byBound.entries()].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** The q-quantile (0..1) of cumulative buckets, in seconds, and the bucket's bound. */
export function quantile(buckets: ReadonlyArray<{ le: number; count: number }>, q: number): { value: number; bound: number } {
  const total = buckets.at(-1)?.count ?? 0;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const { le, count } of buckets) {
    if (count >= rank && count > below) {
      const upper = Number.isFinite(le) ? le : lower;
      return { value: lower + ((upper - lower) * (rank - below)) / (count - below), bound: le };
    }
    if (Number.isFinite(le)) lower = le;
    below = count;
  }
  return { value: lower, bound: Infinity };
}

/** The run cost from a server's `/metrics`; undefined when no transform ran. */
export async function transformRunCost(url: string, token: string): Promise<TransformRunCost | undefined> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const buckets = runBuckets(await response.text());
  const runs = buckets.at(-1)?.count ?? 0;
  if (runs === 0) return undefined;
  const p50 = quantile(buckets, 0.5);
  const p99 = quantile(buckets, 0.99);
  return { runs, p50Us: p50.value * 1e6, p99Us: p99.value * 1e6, p50BucketUs: p50.bound * 1e6, p99BucketUs: p99.bound * 1e6 };
}
