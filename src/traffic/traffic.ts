import { HOUR_MS, MINUTE_MS } from '../platform/config/duration.js';

/**
 * Glossary (README, "A picture of the traffic")
 * - traffic counts: per source and minute, what arrived and what became of
 *   it, kept by the store beside the rows it counts (never a scan of the
 *   inbox): `delivered` in the append's transaction, `refused` by the
 *   refusal writer, forward outcomes where the outbox records them.
 * - bucket: the span one count covers. Minutes are stored; an hour is the
 *   sum of its minutes.
 * Counts are of arrivals: deleting a delivery, or its retention, does not
 * take it back out.
 */

/** Minutes are kept this long (the retention pruner deletes older ones): a 24-hour chart is always whole. */
export const TRAFFIC_KEEP_MS = 48 * HOUR_MS;

export const TRAFFIC_KINDS = ['delivered', 'refused', 'forwarded', 'forwardFailed', 'dead'] as const;
export type TrafficKind = (typeof TRAFFIC_KINDS)[number];

/** Counts of one source in one bucket; a kind left out is 0. */
export type TrafficCounts = Record<TrafficKind, number>;

export interface TrafficBucket extends TrafficCounts {
  source: string;
  /** The bucket's start, ms since the epoch. */
  start: number;
}

/** Counts to add to a minute: refusals, which the refusal writer tallies in memory. */
export interface TrafficIncrement {
  source: string;
  /** Any time in the minute, ms since the epoch. */
  at: number;
  refused: number;
}

export interface TrafficQuery {
  sources: readonly string[];
  /** From this time (ms, inclusive) to `to` (exclusive); both multiples of `bucketMs`. */
  from: number;
  to: number;
  bucketMs: typeof MINUTE_MS | typeof HOUR_MS;
}

/** The traffic counts, as every backend keeps them; `contract/traffic-store-contract.ts` holds them to it. */
export interface TrafficStore {
  /** Adds refusal counts, in one transaction of their own. */
  addRefused(increments: readonly TrafficIncrement[]): Promise<void>;
  /** The buckets of the sources in the range that have any count, by source and start. */
  read(query: TrafficQuery): Promise<TrafficBucket[]>;
  /** Deletes at most `limit` source-minutes that started before `before` (ms); returns how many. */
  pruneOlderThan(before: number, limit: number): Promise<number>;
}

/** The start of the bucket `at` falls in. */
export function bucketStart(at: number, bucketMs: number): number {
  return at - (((at % bucketMs) + bucketMs) % bucketMs);
}

/** Increments summed per source and minute, ready for one upsert each. */
export function byMinute(increments: readonly TrafficIncrement[]): Array<{ source: string; minute: number; refused: number }> {
  const sums = new Map<string, { source: string; minute: number; refused: number }>();
  for (const inc of increments) {
    const minute = bucketStart(inc.at, MINUTE_MS);
    const key = `${minute}\u0000${inc.source}`;
    const sum = sums.get(key);
    if (sum === undefined) sums.set(key, { source: inc.source, minute, refused: inc.refused });
    else sum.refused += inc.refused;
  }
  return [...sums.values()];
}

/** The rows both SQL backends return for `read` (PostgreSQL hands sums back as strings). */
export interface TrafficRow {
  source: string;
  start: number | string;
  delivered: number | string;
  refused: number | string;
  forwarded: number | string;
  forward_failed: number | string;
  dead: number | string;
}

export function trafficFromRow(row: TrafficRow): TrafficBucket {
  return {
    source: row.source,
    start: Number(row.start),
    delivered: Number(row.delivered),
    refused: Number(row.refused),
    forwarded: Number(row.forwarded),
    forwardFailed: Number(row.forward_failed),
    dead: Number(row.dead),
  };
}
