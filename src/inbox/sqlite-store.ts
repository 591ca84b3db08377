import type { InboxDatabase } from './inbox-database.js';
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Database } from '../platform/db/sqlite/driver.js';
import { openDatabase, WAL_CHECKPOINT_PAGES, type SqliteOpenOptions } from '../platform/db/sqlite/open-database.js';
import {
  type AppendOutcome,
  type DeletedBatch,
  type DeriveEventType,
  type EventTypeQuery,
  type EventTypeSummary,
  type IndexBudget,
  type IndexProgress,
  type ListQuery,
  type NewDelivery,
  type SourceQuery,
  type SourceSummary,
  type StoredDelivery,
} from '../deliveries/delivery-store.js';
import { BatchRefusedError, StoreUnavailableError } from '../platform/db/store-errors.js';
import {
  DELIVERY_COLUMNS,
  deliveryFromRow,
  describeStoreError,
  storedEventType,
  type DeliveryRow,
} from '../deliveries/delivery-row.js';
import { escapeKey } from '../deliveries/dedup-key.js';
import { BucketSpans, type DeliveryFilter } from '../deliveries/delivery-filter.js';
import { migrate } from '../platform/db/sqlite/migrate.js';
import { Checkpointer, FALLBACK_CHECKPOINT_PAGES, type CheckpointTotals } from '../platform/db/sqlite/checkpointer.js';
import { SqliteOutbox } from '../forwarding/outbox/sqlite-outbox.js';
import { SqliteRefusals } from '../refusals/sqlite-refusals.js';
import { SqliteList } from './sqlite-list.js';
import { SqliteSearchIndex } from '../search/sqlite-search.js';
import { SqliteTraffic } from '../traffic/sqlite-traffic.js';
import { SqliteIssues } from '../issues/sqlite-issues.js';
import { bucketStart } from '../traffic/traffic.js';
import { MINUTE_MS } from '../platform/config/duration.js';

export interface SqliteStoreOptions extends SqliteOpenOptions {
  /**
   * Checkpoint on a thread of its own (`checkpointer.ts`) instead of in the
   * commit that crosses WAL_CHECKPOINT_PAGES. The server does; a short-lived
   * store (a command, a test) need not start a thread.
   */
  checkpointThread?: boolean;
  /** Told when the checkpoint thread fails and the store checkpoints on the event loop again. */
  onCheckpointThreadFailure?: (error: Error) => void;
}

/**
 * The room the inbox must have left to be ready (`/readyz`), in bytes:
 * twice what the WAL may hold at most, once in the WAL and once more when
 * the checkpoint copies it into the database file. The WAL holds up to the
 * committing connection's checkpoint threshold (32 MiB with the checkpoint
 * thread's fallback, FALLBACK_CHECKPOINT_PAGES) plus the write queue's
 * largest batch (16 MiB, see app.ts). With less, the next deliveries may
 * fail with SQLITE_FULL.
 */
export const READY_MIN_ROOM_BYTES = 96 * 1024 * 1024;

/** How often the idle background work brings the planner's statistics up to date (see `optimize`). */
const OPTIMIZE_EVERY_MS = 60 * 60 * 1000;
/** Rows of each index that `PRAGMA optimize` reads, at most (SQLite's advice: a few hundred to a thousand). */
const ANALYSIS_LIMIT = 1000;

interface SourceRow {
  source: string;
  count: number;
  last_received_at: number;
}

interface EventTypeRow extends SourceRow {
  event_type: string;
}

/** Per key (a source, or a source and a type): deliveries added by a batch, and the latest receivedAt. */
class BatchCounts<K> {
  readonly counts = new Map<string, { key: K; count: number; last: number }>();

  add(id: string, key: K, receivedAt: number): void {
    const count = this.counts.get(id);
    if (count === undefined) this.counts.set(id, { key, count: 1, last: receivedAt });
    else {
      count.count++;
      count.last = Math.max(count.last, receivedAt);
    }
  }
}

export class SqliteStore implements InboxDatabase {
  readonly kind = 'sqlite';
  readonly db: Database;
  readonly file: string;
  readonly outbox: SqliteOutbox;
  readonly refusals: SqliteRefusals;
  readonly traffic: SqliteTraffic;
  readonly issues: SqliteIssues;
  private readonly statements;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly appendAll: (batch: readonly NewDelivery[]) => AppendOutcome[];
  private readonly deleteAll: (filter: DeliveryFilter, beforeSeq: number, limit: number) => DeletedBatch;
  private readonly lists: SqliteList;
  private readonly searchIndex: SqliteSearchIndex;

  constructor(options: SqliteStoreOptions) {
    this.file = options.file;
    this.db = openDatabase(options);
    migrate(this.db);
    const db = this.db;
    // SQLite's own lower() folds ASCII only; the search ignores case in every script.
    db.function('reception_lower', { deterministic: true }, (text: unknown) =>
      typeof text === 'string' ? text.toLowerCase() : null,
    );
    this.optimize();
    if (options.checkpointThread === true) {
      db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
      this.checkpointer = new Checkpointer(this.file, options.durability, (error) => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
        options.onCheckpointThreadFailure?.(error);
      });
    }
    this.outbox = new SqliteOutbox(db);
    this.refusals = new SqliteRefusals(db);
    this.searchIndex = new SqliteSearchIndex(db);
    this.lists = new SqliteList(db, () => this.searchIndex.filled());
    this.traffic = new SqliteTraffic(db);
    this.issues = new SqliteIssues(db);
    const outbox = this.outbox;
    const traffic = this.traffic;
    this.statements = {
      insert: db.prepare(`INSERT INTO deliveries (id, source, received_at, method, query, content_type,
          remote_address, headers, raw, verification_status, verification_scheme, verification_reason, dedup_key, parsed_body, event_type)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (source, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING`),
      countSource: db.prepare(`INSERT INTO sources (source, count, last_received_at) VALUES (?, ?, ?)
        ON CONFLICT (source) DO UPDATE SET
          count = count + excluded.count,
          last_received_at = max(last_received_at, excluded.last_received_at)`),
      countEventType: db.prepare(`INSERT INTO event_types (source, event_type, count, last_received_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (source, event_type) DO UPDATE SET
          count = count + excluded.count,
          last_received_at = max(last_received_at, excluded.last_received_at)`),
      spanBucket: db.prepare<[number, number, number]>(`INSERT INTO time_buckets (bucket, min_seq, max_seq) VALUES (?, ?, ?)
        ON CONFLICT (bucket) DO UPDATE SET min_seq = min(min_seq, excluded.min_seq), max_seq = max(max_seq, excluded.max_seq)`),
      eventTypes: db.prepare<[number], EventTypeRow>(
        `SELECT source, event_type, count, last_received_at FROM event_types
          ORDER BY count DESC, source, event_type LIMIT ?`,
      ),
      eventTypesOf: db.prepare<[string, number], EventTypeRow>(
        `SELECT source, event_type, count, last_received_at FROM event_types WHERE source = ?
          ORDER BY count DESC, event_type LIMIT ?`,
      ),
      deleteSeq: db.prepare<[number]>('DELETE FROM deliveries WHERE seq = ?'),
      byDedupKey: db.prepare<[string, string], Pick<DeliveryRow, 'id' | 'seq' | 'received_at'>>(
        'SELECT id, seq, received_at FROM deliveries WHERE source = ? AND dedup_key = ?',
      ),
      afterAll: db.prepare<[number, number], DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq > ? ORDER BY seq ASC LIMIT ?`,
      ),
      afterSource: db.prepare<[string, number, number], DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE source = ? AND seq > ? ORDER BY seq ASC LIMIT ?`,
      ),
      get: db.prepare<[string], DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ?`),
      delete: db.prepare('DELETE FROM deliveries WHERE id = ?'),
      latestSeq: db.prepare<[], { seq: number }>(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'deliveries'), 0) AS seq",
      ),
      // The primary key orders the names (BINARY: UTF-8 bytes, code point order); a page starts after a name. LIMIT -1: no limit.
      sources: db.prepare<[string, number], SourceRow>(
        'SELECT source, count, last_received_at FROM sources WHERE source > ? ORDER BY source LIMIT ?',
      ),
      searchSources: db.prepare<[string, string, number], SourceRow>(
        `SELECT source, count, last_received_at FROM sources
          WHERE source > ? AND instr(reception_lower(source), ?) > 0 ORDER BY source LIMIT ?`,
      ),
      prune: db.prepare(
        `DELETE FROM deliveries WHERE seq IN (
          SELECT seq FROM deliveries d WHERE received_at < ? AND NOT EXISTS (
            SELECT 1 FROM forwards f WHERE f.delivery_seq = d.seq AND f.status IN ('pending', 'delivering', 'failed'))
          ORDER BY received_at LIMIT ?)`,
      ),
    };
    const { insert, byDedupKey, countSource, countEventType, deleteSeq, spanBucket } = this.statements;
    this.appendAll = db.transaction((batch: readonly NewDelivery[]) => {
      const counts = new BatchCounts<string>();
      const typeCounts = new BatchCounts<[string, string]>();
      const buckets = new BucketSpans();
      const minutes = new Map<string, { source: string; minute: number; count: number }>();
      const outcomes = batch.map((d): AppendOutcome => {
        const eventType = storedEventType(d.eventType);
        const result = insert.run(
          d.id,
          d.source,
          d.receivedAt,
          d.method,
          d.query,
          d.contentType,
          d.remoteAddress,
          JSON.stringify(d.headers),
          d.raw,
          d.verification.status,
          d.verification.scheme ?? null,
          d.verification.reason ?? null,
          d.dedupKey === null ? null : escapeKey(d.dedupKey),
          d.parsedBody ?? null,
          eventType,
        );
        if (result.changes === 1) {
          const leased =
            d.forwards !== undefined && d.forwards.length > 0
              ? outbox.insertForwards(result.lastInsertRowid, d.id, d.source, d.forwards, d.receivedAt)
              : undefined;
          counts.add(d.source, d.source, d.receivedAt);
          typeCounts.add(JSON.stringify([d.source, eventType]), [d.source, eventType], d.receivedAt);
          buckets.add(d.receivedAt, Number(result.lastInsertRowid));
          const minute = bucketStart(d.receivedAt, MINUTE_MS);
          const key = `${minute}\u0000${d.source}`;
          const perMinute = minutes.get(key);
          if (perMinute === undefined) minutes.set(key, { source: d.source, minute, count: 1 });
          else perMinute.count++;
          const seq = Number(result.lastInsertRowid);
          return { id: d.id, seq, receivedAt: d.receivedAt, duplicate: false, ...(leased === undefined ? {} : { leased }) };
        }
        const first = byDedupKey.get(d.source, escapeKey(d.dedupKey ?? ''));
        if (first === undefined) throw new Error('insert ignored without a matching dedup key');
        return { id: first.id, seq: Number(first.seq), receivedAt: Number(first.received_at), duplicate: true };
      });
      // One upsert per source (and per source and type) and batch instead of a trigger per row.
      for (const { key, count, last } of counts.counts.values()) countSource.run(key, count, last);
      for (const { key, count, last } of typeCounts.counts.values()) countEventType.run(key[0], key[1], count, last);
      for (const [bucket, { min, max }] of buckets.spans) spanBucket.run(bucket, min, max);
      // The traffic counts likewise: one upsert per source and minute of the batch.
      for (const { source, minute, count } of minutes.values()) traffic.countDelivered(source, minute, count);
      return outcomes;
    });
    this.deleteAll = db.transaction((filter: DeliveryFilter, beforeSeq: number, limit: number) => {
      const seqs: number[] = [];
      for (const row of this.lists.rows(filter, beforeSeq, limit)) seqs.push(Number(row.seq));
      for (const seq of seqs) deleteSeq.run(seq);
      return { deleted: seqs.length, lowestSeq: seqs.at(-1) };
    });
  }

  async append(batch: readonly NewDelivery[]): Promise<AppendOutcome[]> {
    try {
      if (this.checkpointer?.restartWanted() === true) this.catchUpCheckpoint();
      const outcomes = this.appendAll(batch);
      this.checkpointer?.wrote();
      return outcomes;
    } catch (error) {
      if (refusesTheBatch(error))
        throw new BatchRefusedError(`SQLite refused the batch: ${describeStoreError(error)}`, { cause: error });
      throw new StoreUnavailableError(`SQLite could not commit: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async list(query: ListQuery): Promise<StoredDelivery[]> {
    const rows = this.lists.rows(query, query.beforeSeq ?? Number.MAX_SAFE_INTEGER, query.limit);
    // Row by row, so that a page of large bodies stops at maxBytes without reading the rest.
    const listed: StoredDelivery[] = [];
    let bytes = 0;
    for (const row of rows) {
      listed.push(deliveryFromRow(row));
      bytes += row.raw.length;
      if (query.maxBytes !== undefined && bytes >= query.maxBytes) break;
    }
    return this.withForwards(listed);
  }

  async readAfter(afterSeq: number, limit: number, source?: string): Promise<StoredDelivery[]> {
    const rows =
      source === undefined
        ? this.statements.afterAll.all(afterSeq, limit)
        : this.statements.afterSource.all(source, afterSeq, limit);
    return this.withForwards(rows.map(deliveryFromRow));
  }

  async get(id: string): Promise<StoredDelivery | undefined> {
    const row = this.statements.get.get(id);
    return row === undefined ? undefined : this.withForwards([deliveryFromRow(row)])[0];
  }

  /** The deliveries with their forwards' summaries, read in one query. */
  private withForwards(deliveries: StoredDelivery[]): StoredDelivery[] {
    const summaries = this.outbox.summariesOf(deliveries.map((d) => d.seq));
    for (const delivery of deliveries) {
      const forwards = summaries.get(delivery.seq);
      if (forwards !== undefined) delivery.forwards = forwards;
    }
    return deliveries;
  }

  async latestSeq(): Promise<number> {
    return this.statements.latestSeq.get()?.seq ?? 0;
  }

  async delete(id: string): Promise<boolean> {
    try {
      return this.statements.delete.run(id).changes > 0;
    } catch (error) {
      // A full, locked or failing disk: 503, and the client tries again, as a sender would.
      throw new StoreUnavailableError(`SQLite could not delete: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async sources(query: SourceQuery = {}): Promise<SourceSummary[]> {
    const after = query.after ?? '';
    const limit = query.limit ?? -1;
    const rows =
      query.search === undefined
        ? this.statements.sources.all(after, limit)
        : this.statements.searchSources.all(after, query.search.toLowerCase(), limit);
    return rows.map((row) => ({
      source: row.source,
      count: row.count,
      lastReceivedAt: row.last_received_at,
    }));
  }

  async eventTypes(query: EventTypeQuery): Promise<EventTypeSummary[]> {
    const rows =
      query.source === undefined
        ? this.statements.eventTypes.all(query.limit)
        : this.statements.eventTypesOf.all(query.source, query.limit);
    return rows.map((row) => ({
      source: row.source,
      eventType: row.event_type === '' ? null : row.event_type,
      count: row.count,
      lastReceivedAt: row.last_received_at,
    }));
  }

  async countMatching(filter: DeliveryFilter, limit: number): Promise<number> {
    return this.lists.count(filter, limit);
  }

  async deleteMatching(filter: DeliveryFilter, beforeSeq: number, limit: number): Promise<DeletedBatch> {
    try {
      return this.deleteAll(filter, beforeSeq, limit);
    } catch (error) {
      throw new StoreUnavailableError(`SQLite could not delete: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async indexStep(budget: IndexBudget, derive: DeriveEventType): Promise<IndexProgress> {
    const progress = this.searchIndex.step(budget, derive);
    if (progress.done > 0) this.checkpointer?.wrote();
    if (!progress.more && Date.now() - this.optimizedAt > OPTIMIZE_EVERY_MS) this.optimize();
    return progress;
  }

  private optimizedAt = 0;

  /**
   * SQLite's planner statistics, brought up to date where they are stale
   * (`PRAGMA optimize`, as SQLite advises for a long-lived connection: at
   * open and now and then), reading at most ANALYSIS_LIMIT rows of each
   * index. Without them it chose to sort every delivery of a type prefix
   * (180 ms on 200,000) rather than read the newest first (under 1 ms).
   */
  private optimize(): void {
    this.optimizedAt = Date.now();
    this.db.pragma(`analysis_limit = ${ANALYSIS_LIMIT}`);
    this.db.pragma('optimize = 0x10002');
  }

  async pruneOlderThan(before: number, limit: number): Promise<number> {
    return this.statements.prune.run(before, limit).changes;
  }

  /**
   * Ready when there is room (`room`, at least READY_MIN_ROOM_BYTES) and a
   * write to the probe row commits. The write alone would not do: on a
   * full disk, a write of a page or two still commits as long as the WAL
   * file has room left from before, and a tiny write never needs a new
   * page of the database file, while the next delivery does. Each call
   * costs a commit (an fsync with `full` durability): the health route
   * asks at most once a second (src/inbox/readiness.ts).
   */
  async checkWritable(): Promise<void> {
    try {
      const room = this.room();
      if (room < READY_MIN_ROOM_BYTES) {
        throw new Error(`${room} bytes of room left, less than the ${READY_MIN_ROOM_BYTES} a ready inbox keeps`);
      }
      this.db.prepare('UPDATE reception_probe SET checked_at = ?').run(Date.now());
    } catch (error) {
      throw new StoreUnavailableError(`SQLite is not writable: ${describeStoreError(error)}`, { cause: error });
    }
  }

  /**
   * How many bytes the inbox can still grow by: what the file system has
   * free for this process, or what SQLite's own page limit leaves
   * (`max_page_count`, pages freed by deletes counted in), whichever is less.
   */
  private room(): number {
    const disk = statfsSync(dirname(this.file));
    const pragma = (name: string): number => this.db.pragma(name, { simple: true }) as number;
    const pages = pragma('max_page_count') - pragma('page_count') + pragma('freelist_count');
    return Math.min(disk.bavail * disk.bsize, pages * pragma('page_size'));
  }

  /** Checkpoints run on this connection for the checkpoint thread, so that the WAL starts over. */
  private catchUps = 0;

  /**
   * The checkpoint thread's last copy is done: copy what was committed
   * since it began, so that the next commit starts the WAL over. Busy
   * (the thread copying again) or failed, it is left to the next time.
   */
  private catchUpCheckpoint(): void {
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
      this.catchUps++;
    } catch {
      // The commit that follows reports a store that is not writable.
    }
  }

  /** What the checkpoint thread has done, or undefined without one. */
  checkpoints(): (CheckpointTotals & { catchUps: number }) | undefined {
    const totals = this.checkpointer?.totals();
    return totals === undefined ? undefined : { ...totals, catchUps: this.catchUps };
  }

  async close(): Promise<void> {
    // The thread first: the last connection to close checkpoints the rest and removes the WAL.
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }
}

/**
 * True when SQLite refused what the batch holds rather than the work: a
 * constraint (an id already stored), a value too big or of the wrong type.
 * Busy, full, read-only and I/O errors are the store's, not the batch's.
 */
function refusesTheBatch(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/.test(code);
}
