import type { DeliveryFilter } from './delivery-filter.js';
import type { HeaderList } from '../platform/http/header-list.js';
import type { ForwardStatus } from '../api/forward-status.js';

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

/** A forward to create with its delivery (the receiver decides which, from the routes). */
export interface NewForward {
  id: string;
  destination: string;
  /** The transform of the route that made it (CONTRACT 10), run at each attempt; absent or null: none. */
  transform?: string | null;
  /**
   * Set by this instance's forwarder just before the commit when the
   * destination's dispatcher has room (see docs/forwarding.md, "How a forward
   * goes from the commit to the wire"): the forward is stored `delivering`,
   * its first attempt taken and leased to this instance, as a claim would
   * leave it, unless the destination is paused (then `pending`, as without).
   */
  lease?: CommitLease;
}

/** A lease taken at the commit: what a claim would write. */
export interface CommitLease {
  /** The instance's lease owner (its LeaseKeeper), renewed while it lives. */
  owner: string;
  /** The lease's token, new for this forward. */
  token: string;
  /** When the attempt starts (ms): the commit's time. */
  startedAt: number;
  /** When the lease runs out unless renewed (ms). */
  until: number;
}

/** A delivery's forwards as its JSON shows them. */
export interface ForwardSummary {
  destination: string;
  status: ForwardStatus;
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
  /**
   * The body as JSON text, where the raw bytes alone do not give it back
   * (CONTRACT 9): a multipart body's fields and files, `null` for a body
   * taken by `any`. Absent (or null): read off `raw` by `contentType`.
   */
  parsedBody?: string | null;
  verification: Verification;
  /** When set, a second delivery of the same source with the same key is a duplicate. */
  dedupKey: string | null;
  /** Its event type (CONTRACT 8; see receive/event-type.ts); none when absent. */
  eventType?: string | null;
  /** The forwards to create with it (CONTRACT 6); none for a duplicate. */
  forwards?: readonly NewForward[];
}

/** A delivery as it sits in the inbox. */
export interface StoredDelivery extends Omit<NewDelivery, 'forwards' | 'eventType'> {
  seq: number;
  /**
   * Its event type; null when it has none, and for a delivery stored before
   * event types were kept until the background fill reaches it.
   */
  eventType: string | null;
  /** Its forwards and where each stands; read with the delivery (absent: none). */
  forwards?: ForwardSummary[];
}

/** What `append` says about each delivery of a batch, in the batch's order. */
export interface AppendOutcome {
  id: string;
  seq: number;
  receivedAt: number;
  /** True when an earlier delivery had the same dedup key: nothing new was stored. */
  duplicate: boolean;
  /** Its forwards stored leased to this instance (`NewForward.lease`), with their position; absent: none. */
  leased?: ReadonlyArray<{ id: string; position: number }>;
}

/** A page of the inbox: the deliveries that match the filter (CONTRACT 8), newest first. */
export interface ListQuery extends DeliveryFilter {
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

/** How many deliveries of one source have one event type (null: none), kept as they are stored and deleted. */
export interface EventTypeSummary {
  source: string;
  eventType: string | null;
  count: number;
  /** Milliseconds since the epoch. */
  lastReceivedAt: number;
}

export interface EventTypeQuery {
  /** Only this source's; every source's when absent. */
  source?: string;
  /** At most this many, the most frequent first. */
  limit: number;
}

export interface DeletedBatch {
  deleted: number;
  /** The lowest seq deleted; undefined when none was. */
  lowestSeq: number | undefined;
}

/** The event type of a delivery stored before types were kept (the app derives it as the receiver would). */
export type DeriveEventType = (delivery: StoredDelivery) => string | null;

/** How much one step of the background indexing may do. */
export interface IndexBudget {
  /** Stop after this many milliseconds (the row or chunk in hand is finished). */
  maxMs: number;
  /** Rows read per query, at most. */
  maxRows: number;
}

/** What one step did, and whether there is more to do now. */
export interface IndexProgress {
  /** Rows typed or indexed, chunks of large bodies counted one by one. */
  done: number;
  /** True while deliveries wait for their event type or their place in the search index. */
  more: boolean;
}

/**
 * The inbox, as every backend (SQLite, PostgreSQL) implements it. The store
 * contract suite in `src/inbox/contract/inbox-store-contract.ts` holds each of them
 * to the same behaviour.
 */
export interface InboxStore {
  readonly kind: string;
  /**
   * Commits a batch in one transaction and resolves only after the commit.
   * Rejects as a whole when the batch could not be committed: with
   * `BatchRefusedError` when the store refused something in the batch (then
   * a batch without it may commit), else with `StoreUnavailableError`.
   */
  append(batch: readonly NewDelivery[]): Promise<AppendOutcome[]>;
  /** Newest first. */
  list(query: ListQuery): Promise<StoredDelivery[]>;
  /** Oldest first: deliveries whose seq is greater than `afterSeq`. */
  readAfter(afterSeq: number, limit: number, source?: string): Promise<StoredDelivery[]>;
  /** Undefined for an id that no delivery has, one that no delivery could have (a NUL in it) included. */
  get(id: string): Promise<StoredDelivery | undefined>;
  /** The highest seq committed so far (0 for an empty inbox); live readers start after it. */
  latestSeq(): Promise<number>;
  /** True when a delivery was deleted; false for an id that no delivery has or could have. */
  delete(id: string): Promise<boolean>;
  /** Sources with their counts, by name (see SourceQuery). */
  sources(query?: SourceQuery): Promise<SourceSummary[]>;
  /** Counts per source and event type, the most frequent first (then by source and type). */
  eventTypes(query: EventTypeQuery): Promise<EventTypeSummary[]>;
  /** How many deliveries match `filter`, counted up to `limit` (the answer is at most `limit`). */
  countMatching(filter: DeliveryFilter, limit: number): Promise<number>;
  /**
   * Deletes at most `limit` of the deliveries that match `filter` and have a
   * seq below `beforeSeq`, newest first (their forwards with them): how
   * many, and the lowest seq deleted (a next call may start below it).
   */
  deleteMatching(filter: DeliveryFilter, beforeSeq: number, limit: number): Promise<DeletedBatch>;
  /**
   * One step of the work behind the commits, in short transactions: the
   * search index of new deliveries where the store indexes after the commit
   * (SQLite), then, for deliveries stored before event types and search
   * were kept, their type (from `derive`), its count and their search text,
   * newest first. Until a delivery is reached, it has no type and `text`
   * does not find it.
   */
  indexStep(budget: IndexBudget, derive: DeriveEventType): Promise<IndexProgress>;
  /**
   * Deletes at most `limit` deliveries received before `before` (ms); returns
   * how many. A delivery whose forwards are not all settled (`pending`,
   * `delivering`) or that has a `failed` one is kept.
   */
  pruneOlderThan(before: number, limit: number): Promise<number>;
  /** Resolves when the store can take writes; rejects with the reason otherwise. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}
