import type { HeaderList } from '../platform/http/header-list.js';

/**
 * Glossary (CONTRACT 9)
 * - refusal: a request to `/api/webhook/{source}` that was answered with a
 *   4xx, or with a 503 that the store did not cause (a body turned away
 *   because too many were arriving at once), kept so that whoever waits for
 *   a webhook can see why it never arrived. A delivery kept as failed
 *   (`onFailure: keep`) is a delivery, not a refusal.
 * - preview: the first REFUSAL_PREVIEW_BYTES bytes of the refused body.
 * - bounds: how many refusals are kept per source and in all; the oldest go
 *   first, in the transaction that writes new ones.
 * - seq: a refusal's position among the refusals, in commit order; the
 *   list's order and cursor. Refusals have their own, apart from the inbox's.
 */

/** The bytes of a refused body that are kept (4 KiB). */
export const REFUSAL_PREVIEW_BYTES = 4096;

export interface NewRefusal {
  id: string;
  /** The source named in the path; null when that was not a valid source name. */
  source: string | null;
  /** Milliseconds since the epoch: when the request began to be handled. */
  receivedAt: number;
  method: string;
  /** The HTTP status the sender was answered. */
  status: number;
  /** The problem's `code`, as the sender got it. */
  code: string;
  /** The problem's `detail`, as the sender got it. */
  detail: string;
  /** The Content-Type header as sent; empty when there was none. */
  contentType: string;
  /** The body's size in bytes as far as it is known: its length when read, else its Content-Length, else what arrived. */
  size: number;
  /** As a delivery keeps them: in arrival order, the redacted ones redacted. */
  headers: HeaderList;
  /** At most REFUSAL_PREVIEW_BYTES of the body; empty when none arrived or it was refused for its size. */
  preview: Buffer;
}

export interface StoredRefusal extends NewRefusal {
  seq: number;
}

/** How many refusals are kept at most: per source (invalid names count as one source) and in all. */
export interface RefusalBounds {
  perSource: number;
  total: number;
}

export interface RefusalQuery {
  /** Only refusals of this source. */
  source?: string;
  limit: number;
  /** Only refusals with a smaller seq (the list is newest first). */
  beforeSeq?: number;
}

/**
 * The refusals, kept apart from the inbox in the same database. Every
 * backend keeps a count per source and in all beside the rows, so that
 * holding the bounds costs each write what it inserts and deletes, never a
 * count of the table. The contract suite in
 * `contract/refusal-store-contract.ts` holds each backend to it.
 */
export interface RefusalStore {
  /**
   * Commits a batch in one transaction, and in the same transaction deletes
   * the oldest refusals past `bounds`: of each source in the batch, then of
   * all. Rejects with `StoreUnavailableError` when the store cannot take it
   * now (try again later), `BatchRefusedError` when it refuses what the batch holds.
   */
  add(batch: readonly NewRefusal[], bounds: RefusalBounds): Promise<void>;
  /** Newest first. */
  list(query: RefusalQuery): Promise<StoredRefusal[]>;
  /** How many refusals are kept, of one source or in all. */
  count(source?: string | null): Promise<number>;
  /** Deletes at most `limit` refusals received before `before` (ms); returns how many. */
  pruneOlderThan(before: number, limit: number): Promise<number>;
}

/**
 * The `source` column's value for a refusal: the name, or '' for a name that
 * was not valid (no source name is empty), so that those share one bound
 * and one index like any source.
 */
export function sourceKey(source: string | null): string {
  return source ?? '';
}

export function sourceOfKey(key: string): string | null {
  return key === '' ? null : key;
}

/** The batch's refusals counted per source key, in first-seen order. */
export function countBySource(batch: readonly NewRefusal[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const refusal of batch) {
    const key = sourceKey(refusal.source);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The rows of a refusals table as both SQL backends return them (PostgreSQL hands BIGINT back as strings). */
export interface RefusalRow {
  seq: number | string;
  id: string;
  source: string;
  received_at: number | string;
  method: string;
  status: number;
  code: string;
  detail: string;
  content_type: string;
  size: number | string;
  headers: string;
  preview: Buffer;
}

export const REFUSAL_COLUMNS = 'seq, id, source, received_at, method, status, code, detail, content_type, size, headers, preview';

export function refusalFromRow(row: RefusalRow): StoredRefusal {
  return {
    seq: Number(row.seq),
    id: row.id,
    source: sourceOfKey(row.source),
    receivedAt: Number(row.received_at),
    method: row.method,
    status: row.status,
    code: row.code,
    detail: row.detail,
    contentType: row.content_type,
    size: Number(row.size),
    headers: JSON.parse(row.headers) as HeaderList,
    preview: row.preview,
  };
}
