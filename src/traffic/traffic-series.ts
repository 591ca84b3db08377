import type { TrafficBucket, TrafficKind, TrafficStore } from './traffic.js';
import { bucketStart, TRAFFIC_KINDS } from './traffic.js';
import { HOUR_MS } from '../platform/config/duration.js';
import type { SparklineJson } from '../api/traffic-schemas.js';

/** Buckets of a span: `count` of `bucketMs` each, the last one the bucket that `now` falls in. */
export interface Span {
  from: number;
  count: number;
  bucketMs: number;
}

export function spanEndingAt(now: number, rangeMs: number, bucketMs: number): Span {
  const count = Math.max(1, Math.round(rangeMs / bucketMs));
  return { from: bucketStart(now, bucketMs) - (count - 1) * bucketMs, count, bucketMs };
}

export const spanEnd = (span: Span): number => span.from + span.count * span.bucketMs;

/** Each kind's counts of one source as an array over the span, zeros where the store has no bucket. */
export function seriesOf(buckets: readonly TrafficBucket[], span: Span): Record<TrafficKind, number[]> {
  const series = Object.fromEntries(TRAFFIC_KINDS.map((kind) => [kind, new Array<number>(span.count).fill(0)])) as Record<
    TrafficKind,
    number[]
  >;
  for (const bucket of buckets) {
    const index = (bucket.start - span.from) / span.bucketMs;
    if (!Number.isInteger(index) || index < 0 || index >= span.count) continue;
    for (const kind of TRAFFIC_KINDS) series[kind][index] = bucket[kind];
  }
  return series;
}

/** The 24-hour sparklines of several sources, read in one query. */
export async function sparklines(
  traffic: TrafficStore,
  sources: readonly string[],
  now: number,
): Promise<Map<string, SparklineJson>> {
  const span = spanEndingAt(now, 24 * HOUR_MS, HOUR_MS);
  const buckets = await traffic.read({ sources, from: span.from, to: spanEnd(span), bucketMs: HOUR_MS });
  const bySource = new Map<string, TrafficBucket[]>();
  for (const bucket of buckets) {
    const list = bySource.get(bucket.source) ?? [];
    list.push(bucket);
    bySource.set(bucket.source, list);
  }
  const from = new Date(span.from).toISOString();
  return new Map(
    sources.map((source) => {
      const series = seriesOf(bySource.get(source) ?? [], span);
      return [source, { from, bucketSeconds: HOUR_MS / 1000, delivered: series.delivered, refused: series.refused }];
    }),
  );
}
