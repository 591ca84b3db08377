import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Database } from './driver.js';
import {
  StoreUnavailableError,
  type AppendOutcome,
  type InboxStore,
  type ListQuery,
  type NewDelivery,
  type SourceQuery,
  type SourceSummary,
  type StoredDelivery,
} from '../inbox-store.js';
import { DELIVERY_COLUMNS, deliveryFromRow, describeStoreError, type DeliveryRow } from '../delivery-row.js';
import { migrate } from './migrate.js';

/**
 * `full`: SQLite `synchronous=FULL`, the WAL is synced at every commit, so an
 * acknowledged delivery survives a power loss. `relaxed`: `synchronous=NORMAL`,
 * it survives a crash of the process (kill -9) but the last commits may be
 * lost on power loss or an OS crash.
 */
export type Durability = 'full' | 'relaxed';

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
  return `${file} can be read by other users of this machine (mode ${mode.toString(8).padStart(4, '0')}), and it holds every payload: `
    + `chmod 600 ${file}* and chmod 700 on its directory, unless that is meant`;
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
  private readonly statements;
  private readonly appendAll: (batch: readonly NewDelivery[]) => AppendOutcome[];

  constructor(options: SqliteStoreOptions) {
    this.file = options.file;
    this.db = openDatabase(options);
    migrate(this.db);
    const db = this.db;
    // SQLite's own lower() folds ASCII only; the search ignores case in every script.
    db.function('reception_lower', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : null));
    this.statements = {
      insert: db.prepare(`INSERT INTO deliveries (id, source, received_at, method, query, content_type,
          remote_address, headers, raw, verification_status, verification_scheme, verification_reason, dedup_key)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
          SELECT seq FROM deliveries WHERE received_at < ? ORDER BY received_at LIMIT ?)`,
      ),
    };
    const { insert, byDedupKey, countSource } = this.statements;
    this.appendAll = db.transaction((batch: readonly NewDelivery[]) => {
      const counts = new Map<string, { count: number; last: number }>();
      const outcomes = batch.map((d): AppendOutcome => {
        const result = insert.run(
          d.id, d.source, d.receivedAt, d.method, d.query, d.contentType, d.remoteAddress,
          JSON.stringify(d.headers), d.raw, d.verification.status, d.verification.scheme ?? null,
          d.verification.reason ?? null, d.dedupKey,
        );
        if (result.changes === 1) {
          const count = counts.get(d.source);
          if (count === undefined) counts.set(d.source, { count: 1, last: d.receivedAt });
          else {
            count.count++;
            count.last = Math.max(count.last, d.receivedAt);
          }
          return { id: d.id, seq: Number(result.lastInsertRowid), receivedAt: d.receivedAt, duplicate: false };
        }
        const first = byDedupKey.get(d.source, d.dedupKey ?? '');
        if (first === undefined) throw new Error('insert ignored without a matching dedup key');
        return { id: first.id, seq: Number(first.seq), receivedAt: Number(first.received_at), duplicate: true };
      });
      // One upsert per source and batch instead of a trigger per row.
      for (const [source, { count, last }] of counts) countSource.run(source, count, last);
      return outcomes;
    });
  }

  async append(batch: readonly NewDelivery[]): Promise<AppendOutcome[]> {
    try {
      return this.appendAll(batch);
    } catch (error) {
      throw new StoreUnavailableError(`SQLite could not commit: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async list(query: ListQuery): Promise<StoredDelivery[]> {
    const before = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows = query.source === undefined
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
    return listed;
  }

  async readAfter(afterSeq: number, limit: number, source?: string): Promise<StoredDelivery[]> {
    const rows = source === undefined
      ? this.statements.afterAll.all(afterSeq, limit)
      : this.statements.afterSource.all(source, afterSeq, limit);
    return rows.map(deliveryFromRow);
  }

  async get(id: string): Promise<StoredDelivery | undefined> {
    const row = this.statements.get.get(id);
    return row === undefined ? undefined : deliveryFromRow(row);
  }

  async latestSeq(): Promise<number> {
    return this.statements.latestSeq.get()?.seq ?? 0;
  }

  async delete(id: string): Promise<boolean> {
    return this.statements.delete.run(id).changes > 0;
  }

  async sources(query: SourceQuery = {}): Promise<SourceSummary[]> {
    const after = query.after ?? '';
    const limit = query.limit ?? -1;
    const rows = query.search === undefined
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

  async checkWritable(): Promise<void> {
    try {
      this.db.prepare('BEGIN IMMEDIATE').run();
      this.db.prepare('ROLLBACK').run();
    } catch (error) {
      throw new StoreUnavailableError(`SQLite is not writable: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

