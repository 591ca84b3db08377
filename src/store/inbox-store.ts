import type { HeaderList } from '../receive/headers.js';

/**
 * Glossary
 * - delivery: one request received on `/api/webhook/{source}` and kept.
 * - source: the path segment that names the sender; each has its own inbox.
 * - seq: the delivery's position in the whole inbox; strictly increasing in
 *   commit order and never reused, so that a reader can resume after it.
 * - id: the opaque, URL-safe name of a delivery that the API hands out.
 * - raw: the body bytes exactly as they arrived.
 */

export type VerificationStatus = 'verified' | 'failed' | 'none';

export interface Verification {
  status: VerificationStatus;
  /** The scheme that checked the signature; absent when the status is `none`. */
  scheme?: string;
  /** Why a check failed (for operators; never the secret or the signature). */
  reason?: string;
}

/** Everything about a delivery that the receiver decides before it is stored. */
export interface NewDelivery {
  id: string;
  source: string;
  /** Milliseconds since the epoch. */
  receivedAt: number;
  method: string;
  query: string;
  contentType: string;
  remoteAddress: string;
  headers: HeaderList;
  raw: Buffer;
  verification: Verification;
  /** When set, a second delivery of the same source with the same key is a duplicate. */
  dedupKey: string | null;
}

/** A delivery as it sits in the inbox. */
export interface StoredDelivery extends NewDelivery {
  seq: number;
}

/** What `append` says about each delivery of a batch, in the batch's order. */
export interface AppendOutcome {
  id: string;
  seq: number;
  receivedAt: number;
  /** True when an earlier delivery had the same dedup key: nothing new was stored. */
  duplicate: boolean;
}

export interface ListQuery {
  source?: string;
  limit: number;
  /** Only deliveries with a smaller seq (the list is newest first). */
  beforeSeq?: number;
  /**
   * Stop once the raw bodies of the deliveries listed add up to this many
   * bytes or more: the delivery that reaches it is the last one listed, and
   * the first is always listed, whatever its size. A page of large bodies
   * then stays small enough to serialize (see the deliveries route).
   */
  maxBytes?: number;
}

/**
 * Which sources to list. Names are ordered by code point (the order of
 * their UTF-8 bytes), the same on every backend, so that a page can go on
 * after the last name of the one before it.
 */
export interface SourceQuery {
  /** At most this many; every one when absent. */
  limit?: number;
  /** Only names that come after this one. */
  after?: string;
  /** Only names that contain this text, ignoring case (Unicode lower case). */
  search?: string;
}

export interface SourceSummary {
  source: string;
  count: number;
  /** Milliseconds since the epoch. */
  lastReceivedAt: number;
}

/**
 * The inbox, as every backend (SQLite, PostgreSQL) implements it. The store
 * contract suite in `test/store/inbox-store-contract.ts` holds each of them
 * to the same behaviour.
 */
export interface InboxStore {
  readonly kind: string;
  /**
   * Commits a batch in one transaction and resolves only after the commit.
   * Rejects as a whole when the batch could not be committed.
   */
  append(batch: readonly NewDelivery[]): Promise<AppendOutcome[]>;
  /** Newest first. */
  list(query: ListQuery): Promise<StoredDelivery[]>;
  /** Oldest first: deliveries whose seq is greater than `afterSeq`. */
  readAfter(afterSeq: number, limit: number, source?: string): Promise<StoredDelivery[]>;
  get(id: string): Promise<StoredDelivery | undefined>;
  /** The highest seq committed so far (0 for an empty inbox); live readers start after it. */
  latestSeq(): Promise<number>;
  /** True when a delivery was deleted. */
  delete(id: string): Promise<boolean>;
  /** Sources with their counts, by name (see SourceQuery). */
  sources(query?: SourceQuery): Promise<SourceSummary[]>;
  /** Deletes at most `limit` deliveries received before `before` (ms); returns how many. */
  pruneOlderThan(before: number, limit: number): Promise<number>;
  /** Resolves when the store can take writes; rejects with the reason otherwise. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}

/** The store could not take the write (disk full, locked, down): answer 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
