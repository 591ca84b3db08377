import type { VerificationStatus } from './delivery-store.js';

/** Which event types a filter keeps: one exactly, or every one that begins with `prefix` (`invoice.*`). */
export type EventTypeMatch = { exact: string } | { prefix: string };

/**
 * Which deliveries a list or a delete is about (CONTRACT 8). Every field
 * narrows; none set: the whole inbox.
 */
export interface DeliveryFilter {
  source?: string;
  eventType?: EventTypeMatch;
  verification?: VerificationStatus;
  /** Received at or after this time (ms). */
  since?: number;
  /** Received before this time (ms). */
  until?: number;
  /**
   * The raw body (as text, invalid UTF-8 replaced) or a header value
   * contains this, ignoring case; at least 3 characters (the search index
   * works in trigrams). See search-text.ts.
   */
  text?: string;
}

/** True when the filter narrows anything at all. */
export function narrows(filter: DeliveryFilter): boolean {
  return (
    filter.source !== undefined ||
    filter.eventType !== undefined ||
    filter.verification !== undefined ||
    filter.since !== undefined ||
    filter.until !== undefined ||
    filter.text !== undefined
  );
}

/**
 * The smallest string greater than every string that begins with `prefix`,
 * in code point order (SQLite's BINARY, PostgreSQL's COLLATE "C"): the
 * prefix with its last code point raised by one (past the surrogates, and
 * dropping code points that cannot be raised). Undefined when there is none
 * (an empty prefix, or one of U+10FFFF only). `prefix <= s < bound` holds
 * exactly for the strings that begin with `prefix`.
 */
export function prefixBound(prefix: string): string | undefined {
  const points = [...prefix];
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) ?? 0;
    if (last < 0x10ffff) {
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

/**
 * The time buckets of migration 000006/000008: the lowest and highest seq
 * received in each 10 minutes. A list filtered by time reads only the seqs
 * its buckets span (see `timeWindow`).
 */
export const BUCKET_MS = 10 * 60 * 1000;

export function bucketOf(receivedAt: number): number {
  return Math.floor(receivedAt / BUCKET_MS);
}

/** The first and last bucket that a filter's since/until can reach; undefined when it has neither. */
export function timeWindow(filter: DeliveryFilter): { first: number; last: number } | undefined {
  if (filter.since === undefined && filter.until === undefined) return undefined;
  return {
    first: filter.since === undefined ? Number.MIN_SAFE_INTEGER : bucketOf(filter.since),
    last: filter.until === undefined ? Number.MAX_SAFE_INTEGER : bucketOf(filter.until - 1),
  };
}

/** The buckets of a batch: per bucket, the lowest and highest seq stored in it. */
export class BucketSpans {
  readonly spans = new Map<number, { min: number; max: number }>();

  add(receivedAt: number, seq: number): void {
    const bucket = bucketOf(receivedAt);
    const span = this.spans.get(bucket);
    if (span === undefined) this.spans.set(bucket, { min: seq, max: seq });
    else {
      span.min = Math.min(span.min, seq);
      span.max = Math.max(span.max, seq);
    }
  }
}
