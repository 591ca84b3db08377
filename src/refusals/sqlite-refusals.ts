import type { Database } from '../platform/db/sqlite/driver.js';
import { describeStoreError } from '../deliveries/delivery-row.js';
import { BatchRefusedError, StoreUnavailableError } from '../platform/db/store-errors.js';
import {
  countBySource,
  REFUSAL_COLUMNS,
  refusalFromRow,
  sourceKey,
  type NewRefusal,
  type RefusalBounds,
  type RefusalQuery,
  type RefusalRow,
  type RefusalStore,
  type StoredRefusal,
} from './refusals.js';

/**
 * The refusals on SQLite (see `RefusalStore`), on the inbox's own
 * connection: a second connection would wait for the inbox's write lock
 * with the event loop blocked, or make the inbox's commits wait for its own.
 *
 * A refusal is not worth an fsync, nor a wait: its transactions commit with
 * `synchronous=NORMAL` whatever the inbox's durability, so that writing
 * refusals never makes the event loop wait for the disk (the next commit of
 * a delivery syncs the WAL, refusals and all), and with no busy timeout: a
 * write lock held by another process fails the batch at once (it is tried
 * again later) rather than holding the event loop for the inbox's timeout.
 * A crash may lose the last refusals; never a delivery.
 */
export class SqliteRefusals implements RefusalStore {
  private readonly q;
  private readonly addAll: (batch: readonly NewRefusal[], bounds: RefusalBounds) => void;
  private readonly pruneAll: (before: number, limit: number) => number;

  constructor(private readonly db: Database) {
    this.q = {
      insert: db.prepare(
        `INSERT INTO refusals (id, source, received_at, method, status, code, detail, content_type, size, headers, preview)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addCount: db.prepare<[string, number], { count: number }>(
        `INSERT INTO refusal_counts (source, count) VALUES (?, ?)
         ON CONFLICT (source) DO UPDATE SET count = count + excluded.count RETURNING count`,
      ),
      subtractCount: db.prepare<[number, string]>('UPDATE refusal_counts SET count = count - ? WHERE source = ?'),
      dropEmptyCounts: db.prepare('DELETE FROM refusal_counts WHERE count <= 0'),
      addTotal: db.prepare<[number], { count: number }>('UPDATE refusal_total SET count = count + ? RETURNING count'),
      pruneSource: db.prepare<[string, number]>(
        'DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals WHERE source = ? ORDER BY seq LIMIT ?)',
      ),
      pruneOldest: db.prepare<[number], { source: string }>(
        'DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals ORDER BY seq LIMIT ?) RETURNING source',
      ),
      pruneBefore: db.prepare<[number, number], { source: string }>(
        `DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals WHERE received_at < ? ORDER BY received_at LIMIT ?)
         RETURNING source`,
      ),
      listAll: db.prepare<[number, number], RefusalRow>(
        `SELECT ${REFUSAL_COLUMNS} FROM refusals WHERE seq < ? ORDER BY seq DESC LIMIT ?`,
      ),
      listSource: db.prepare<[string, number, number], RefusalRow>(
        `SELECT ${REFUSAL_COLUMNS} FROM refusals WHERE source = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
      ),
      countSource: db.prepare<[string], { count: number }>('SELECT count FROM refusal_counts WHERE source = ?'),
      countAll: db.prepare<[], { count: number }>('SELECT count FROM refusal_total'),
    };
    const q = this.q;
    /** Takes `deleted` rows' sources off the counts. */
    const uncount = (sources: readonly string[]): void => {
      const bySource = new Map<string, number>();
      for (const source of sources) bySource.set(source, (bySource.get(source) ?? 0) + 1);
      for (const [source, n] of bySource) q.subtractCount.run(n, source);
      q.dropEmptyCounts.run();
      q.addTotal.run(-sources.length);
    };
    this.addAll = db.transaction((batch: readonly NewRefusal[], bounds: RefusalBounds) => {
      for (const r of batch) {
        q.insert.run(
          r.id,
          sourceKey(r.source),
          r.receivedAt,
          r.method,
          r.status,
          r.code,
          r.detail,
          r.contentType,
          r.size,
          JSON.stringify(r.headers),
          r.preview,
        );
      }
      let added = batch.length;
      for (const [source, n] of countBySource(batch)) {
        const count = q.addCount.get(source, n)?.count ?? n;
        if (count <= bounds.perSource) continue;
        const deleted = q.pruneSource.run(source, count - bounds.perSource).changes;
        q.subtractCount.run(deleted, source);
        added -= deleted;
      }
      q.dropEmptyCounts.run();
      const total = q.addTotal.get(added)?.count ?? 0;
      if (total > bounds.total) uncount(q.pruneOldest.all(total - bounds.total).map((row) => row.source));
    });
    this.pruneAll = db.transaction((before: number, limit: number) => {
      const sources = q.pruneBefore.all(before, limit).map((row) => row.source);
      if (sources.length > 0) uncount(sources);
      return sources.length;
    });
  }

  async add(batch: readonly NewRefusal[], bounds: RefusalBounds): Promise<void> {
    if (batch.length === 0) return;
    this.withoutSync(() => this.addAll(batch, bounds), 'write refusals');
  }

  async list(query: RefusalQuery): Promise<StoredRefusal[]> {
    const before = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows =
      query.source === undefined
        ? this.q.listAll.all(before, query.limit)
        : this.q.listSource.all(query.source, before, query.limit);
    return rows.map(refusalFromRow);
  }

  async count(source?: string | null): Promise<number> {
    if (source === undefined) return this.q.countAll.get()?.count ?? 0;
    return this.q.countSource.get(sourceKey(source))?.count ?? 0;
  }

  async pruneOlderThan(before: number, limit: number): Promise<number> {
    return this.withoutSync(() => this.pruneAll(before, limit), 'prune refusals');
  }

  /** Runs `work` (one transaction) with synchronous=NORMAL and no busy timeout, then puts the connection's back. */
  private withoutSync<T>(work: () => T, what: string): T {
    const level = this.db.pragma('synchronous', { simple: true }) as number;
    const busyTimeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    try {
      if (level > 1) this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 0');
      return work();
    } catch (error) {
      const code = (error as { code?: unknown } | undefined)?.code;
      if (typeof code === 'string' && /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/.test(code)) {
        throw new BatchRefusedError(`SQLite refused the refusals: ${describeStoreError(error)}`, { cause: error });
      }
      throw new StoreUnavailableError(`SQLite could not ${what}: ${describeStoreError(error)}`, { cause: error });
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
      if (level > 1) this.db.pragma(`synchronous = ${level}`);
    }
  }
}
