import { closeSync, mkdirSync, openSync, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Database } from './driver.js';
import {
  BatchRefusedError,
  StoreUnavailableError,
  type AppendOutcome,
  type Durability,
  type InboxStore,
  type ListQuery,
  type NewDelivery,
  type SourceQuery,
  type SourceSummary,
  type StoredDelivery,
} from '../inbox-store.js';
import { DELIVERY_COLUMNS, deliveryFromRow, describeStoreError, type DeliveryRow } from '../delivery-row.js';
import { migrate } from './migrate.js';
import { SqliteOutbox } from './sqlite-outbox.js';
import { SqliteRefusals } from './sqlite-refusals.js';
import { SqliteTraffic } from './sqlite-traffic.js';
import { bucketStart, MINUTE_MS } from '../traffic.js';

export interface SqliteStoreOptions {
  file: string;
  durability: Durability;
  /** How long a write waits for a lock held by another connection, in ms. */
  busyTimeoutMs?: number;
}

/**
 * WAL pages after which a commit also checkpoints (SQLite's default is
 * 1,000). The checkpoint runs inside the commit, on the event loop, and was
 * the longest stall under load: with 250, each copies at most a quarter as
 * many pages, and the bench's p99 fell from 11-15 ms to 7-12 ms in
 * back-to-back runs at about the same throughput (bench/RESULTS.md). It
 * also keeps the WAL file near 1 MiB.
 */
export const WAL_CHECKPOINT_PAGES = 250;

/**
 * The room the inbox must have left to be ready (`/readyz`), in bytes:
 * twice a commit of the write queue's largest batch (16 MiB, see app.ts),
 * once in the WAL and once more when the checkpoint copies it into the
 * database file. With less, the next deliveries may fail with SQLITE_FULL.
 */
export const READY_MIN_ROOM_BYTES = 32 * 1024 * 1024;

/**
 * Opens a connection with the pragmas every connection of the inbox needs.
 * A new inbox is readable by this user only (its directory 0700, its file
 * 0600): it holds whatever senders sent, secrets in payloads included.
 * SQLite gives the `-wal` and `-shm` files the database file's mode.
 */
export function openDatabase(options: SqliteStoreOptions): Database {
  mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  closeSync(openSync(options.file, 'a', 0o600));
  const db = new Database(options.file);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 1000}`);
  switchToWal(db);
  // better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1 (NORMAL):
  // set the level explicitly on every connection.
  db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  return db;
}

/**
 * A warning for an inbox file that other users of the machine may read
 * (made by an older version, or copied): undefined when only its owner can.
 */
export function permissionWarning(file: string): string | undefined {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  return (
    `${file} can be read by other users of this machine (mode ${mode.toString(8).padStart(4, '0')}), and it holds every payload: ` +
    `chmod 600 ${file}* and chmod 700 on its directory, unless that is meant`
  );
}

/** How long opening waits for another connection that is switching a new file to WAL at the same moment. */
const WAL_SWITCH_WAIT_MS = 5000;

/**
 * `journal_mode = WAL`. On a new file that another connection is opening at
 * the same moment, SQLite answers SQLITE_BUSY at once, without waiting in
 * the busy handler: try again for a while.
 */
function switchToWal(db: Database): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

interface SourceRow {
  source: string;
  count: number;
  last_received_at: number;
}

export class SqliteStore implements InboxStore {
  readonly kind = 'sqlite';
  readonly db: Database;
  readonly file: string;
  readonly outbox: SqliteOutbox;
  readonly refusals: SqliteRefusals;
  readonly traffic: SqliteTraffic;
  private readonly statements;
  private readonly appendAll: (batch: readonly NewDelivery[]) => AppendOutcome[];

  constructor(options: SqliteStoreOptions) {
    this.file = options.file;
    this.db = openDatabase(options);
    migrate(this.db);
    const db = this.db;
    // SQLite's own lower() folds ASCII only; the search ignores case in every script.
    db.function('reception_lower', { deterministic: true }, (text: unknown) =>
      typeof text === 'string' ? text.toLowerCase() : null,
    );
    this.outbox = new SqliteOutbox(db);
    this.refusals = new SqliteRefusals(db);
    this.traffic = new SqliteTraffic(db);
    const outbox = this.outbox;
    const traffic = this.traffic;
    this.statements = {
      insert: db.prepare(`INSERT INTO deliveries (id, source, received_at, method, query, content_type,
          remote_address, headers, raw, verification_status, verification_scheme, verification_reason, dedup_key, parsed_body)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (source, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING`),
      countSource: db.prepare(`INSERT INTO sources (source, count, last_received_at) VALUES (?, ?, ?)
        ON CONFLICT (source) DO UPDATE SET
          count = count + excluded.count,
          last_received_at = max(last_received_at, excluded.last_received_at)`),
      byDedupKey: db.prepare<[string, string], Pick<DeliveryRow, 'id' | 'seq' | 'received_at'>>(
        'SELECT id, seq, received_at FROM deliveries WHERE source = ? AND dedup_key = ?',
      ),
      listAll: db.prepare<[number, number], DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq < ? ORDER BY seq DESC LIMIT ?`,
      ),
      listSource: db.prepare<[string, number, number], DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE source = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
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
    const { insert, byDedupKey, countSource } = this.statements;
    this.appendAll = db.transaction((batch: readonly NewDelivery[]) => {
      const counts = new Map<string, { count: number; last: number }>();
      const minutes = new Map<string, { source: string; minute: number; count: number }>();
      const outcomes = batch.map((d): AppendOutcome => {
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
          d.dedupKey,
          d.parsedBody ?? null,
        );
        if (result.changes === 1) {
          if (d.forwards !== undefined && d.forwards.length > 0) {
            outbox.insertForwards(result.lastInsertRowid, d.id, d.source, d.forwards, d.receivedAt);
          }
          const count = counts.get(d.source);
          if (count === undefined) counts.set(d.source, { count: 1, last: d.receivedAt });
          else {
            count.count++;
            count.last = Math.max(count.last, d.receivedAt);
          }
          const minute = bucketStart(d.receivedAt, MINUTE_MS);
          const key = `${minute}\u0000${d.source}`;
          const perMinute = minutes.get(key);
          if (perMinute === undefined) minutes.set(key, { source: d.source, minute, count: 1 });
          else perMinute.count++;
          return { id: d.id, seq: Number(result.lastInsertRowid), receivedAt: d.receivedAt, duplicate: false };
        }
        const first = byDedupKey.get(d.source, d.dedupKey ?? '');
        if (first === undefined) throw new Error('insert ignored without a matching dedup key');
        return { id: first.id, seq: Number(first.seq), receivedAt: Number(first.received_at), duplicate: true };
      });
      // One upsert per source and batch instead of a trigger per row.
      for (const [source, { count, last }] of counts) countSource.run(source, count, last);
      // The traffic counts likewise: one upsert per source and minute of the batch.
      for (const { source, minute, count } of minutes.values()) traffic.countDelivered(source, minute, count);
      return outcomes;
    });
  }

  async append(batch: readonly NewDelivery[]): Promise<AppendOutcome[]> {
    try {
      return this.appendAll(batch);
    } catch (error) {
      if (refusesTheBatch(error))
        throw new BatchRefusedError(`SQLite refused the batch: ${describeStoreError(error)}`, { cause: error });
      throw new StoreUnavailableError(`SQLite could not commit: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async list(query: ListQuery): Promise<StoredDelivery[]> {
    const before = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows =
      query.source === undefined
        ? this.statements.listAll.iterate(before, query.limit)
        : this.statements.listSource.iterate(query.source, before, query.limit);
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
   * asks at most once a second (src/http/readiness.ts).
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

  async close(): Promise<void> {
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
