import type { Statement } from 'better-sqlite3';
import type { Database } from '../platform/db/sqlite/driver.js';
import { deliveryColumnsOf, type DeliveryRow } from '../deliveries/delivery-row.js';
import { prefixBound, timeWindow, type DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { HeaderList } from '../platform/http/header-list.js';
import { containsText, searchNeedle } from '../search/search-text.js';
import { MAX_CHUNKS, trigramQuery, TrigramSample } from '../search/sqlite-search.js';

/** A filter's conditions on `deliveries d`, and the values of their parameters in order. */
interface Conditions {
  /** What the conditions are, without their values: the key of the prepared statement. */
  shape: string;
  sql: string[];
  values: unknown[];
}

/** What the list knows that SQLite's planner may not (its statistics are sampled: see sqlite-store.ts `optimize`). */
interface PlanHints {
  /** The time buckets cover every delivery. */
  buckets: boolean;
  /** The event type prefix matches more deliveries than are worth sorting (PREFIX_SORT_MOST). */
  commonPrefix: boolean;
}

/**
 * Deliveries of a type prefix that the list sorts by seq, at most: past
 * this, it reads the newest first and keeps those of the prefix (the first
 * page needs about 51 × all / matching rows read), as the counts per type
 * tell. With sampled statistics SQLite sorted all 19,000 of a prefix on
 * 200,000 deliveries (110 ms); read newest first, under 1 ms.
 */
const PREFIX_SORT_MOST = 5000;

/**
 * The conditions of `filter` on `deliveries d`. With `buckets` (the time
 * buckets cover every delivery), since/until also bound the seqs to those
 * their buckets span, and the times are checked row by row (`+`: not by
 * the received_at index, which would sort every delivery of the period).
 * A common prefix is checked row by row too.
 */
function conditionsOf(filter: DeliveryFilter, hints: PlanHints): Conditions {
  const shape: string[] = [];
  const sql: string[] = [];
  const values: unknown[] = [];
  const add = (name: string, condition: string, ...params: unknown[]): void => {
    shape.push(name);
    sql.push(condition);
    values.push(...params);
  };
  if (filter.source !== undefined) add('source', 'd.source = ?', filter.source);
  const type = filter.eventType;
  if (type !== undefined && 'exact' in type) add('type', 'd.event_type = ?', type.exact);
  if (type !== undefined && 'prefix' in type) {
    const bound = prefixBound(type.prefix);
    if (type.prefix === '') add('typed', "d.event_type <> ''");
    else if (bound === undefined) add('from', 'd.event_type >= ?', type.prefix);
    else if (hints.commonPrefix) add('common-prefix', '+d.event_type >= ? AND +d.event_type < ?', type.prefix, bound);
    else add('prefix', 'd.event_type >= ? AND d.event_type < ?', type.prefix, bound);
  }
  if (filter.verification !== undefined) add('verification', 'd.verification_status = ?', filter.verification);
  const window = hints.buckets ? timeWindow(filter) : undefined;
  const time = window === undefined ? 'd.received_at' : '+d.received_at';
  if (filter.since !== undefined) add('since', `${time} >= ?`, filter.since);
  if (filter.until !== undefined) add('until', `${time} < ?`, filter.until);
  if (window !== undefined) {
    add(
      'window',
      `d.seq >= (SELECT coalesce(min(min_seq), 0) FROM time_buckets WHERE bucket BETWEEN ? AND ?)
        AND d.seq <= (SELECT coalesce(max(max_seq), 0) FROM time_buckets WHERE bucket BETWEEN ? AND ?)`,
      window.first,
      window.last,
      window.first,
      window.last,
    );
  }
  return { shape: shape.join(','), sql, values };
}

/**
 * The inbox's list on SQLite, filtered (CONTRACT 8), newest first. Without
 * `text`, one query whose conditions SQLite answers from the indexes of
 * migrations 000001 and 000006. With `text`, the search index's candidates,
 * newest first, each checked against the delivery's own text (the index
 * keeps trigrams, not where they are), as many as the page needs.
 */
export class SqliteList {
  private readonly statements = new Map<string, Statement<unknown[], DeliveryRow>>();
  private readonly candidates = new Map<string, Statement<unknown[], { seq: number }>>();
  private readonly counts = new Map<string, Statement<unknown[], { n: number }>>();
  private readonly bySeq;
  private readonly sample: TrigramSample;
  private readonly prefixCount;
  private readonly prefixCountOf;

  /** `buckets`: whether the time buckets cover every delivery (not before the fill of older ones is over). */
  constructor(
    private readonly db: Database,
    private readonly buckets: () => boolean,
  ) {
    this.bySeq = db.prepare<[number], DeliveryRow>(`SELECT ${deliveryColumnsOf('d')} FROM deliveries d WHERE d.seq = ?`);
    const newest = db.prepare<[number], { headers: string; raw: Buffer }>(
      'SELECT headers, raw FROM deliveries ORDER BY seq DESC LIMIT ?',
    );
    this.sample = new TrigramSample((limit) => newest.all(limit));
    this.prefixCount = db.prepare<[string, string], { n: number }>(
      'SELECT coalesce(sum(count), 0) AS n FROM event_types WHERE event_type >= ? AND event_type < ?',
    );
    this.prefixCountOf = db.prepare<[string, string, string], { n: number }>(
      'SELECT coalesce(sum(count), 0) AS n FROM event_types WHERE source = ? AND event_type >= ? AND event_type < ?',
    );
  }

  /** The matching deliveries below `beforeSeq`, newest first, read as they are asked for. */
  *rows(filter: DeliveryFilter, beforeSeq: number, limit: number): Generator<DeliveryRow> {
    if (limit <= 0) return;
    const conditions = conditionsOf(filter, this.hints(filter));
    if (filter.text === undefined) {
      yield* this.plain(conditions).iterate(...conditions.values, beforeSeq, limit);
      return;
    }
    const needle = searchNeedle(filter.text);
    const query = trigramQuery(filter.text, (trigram) => this.sample.frequency(trigram));
    let found = 0;
    // Fewer than three characters have no trigram: the filtered list, checked row by row.
    const rows =
      query === undefined
        ? this.plain(conditions).iterate(...conditions.values, beforeSeq, -1)
        : this.searched(conditions, query, beforeSeq);
    for (const row of rows) {
      if (!containsText(JSON.parse(row.headers) as HeaderList, row.raw, needle)) continue;
      yield row;
      if (++found >= limit) return;
    }
  }

  /** How many match, up to `limit`: from the indexes alone without a text; with one, each candidate checked. */
  count(filter: DeliveryFilter, limit: number): number {
    if (filter.text !== undefined) {
      const rows = this.rows(filter, Number.MAX_SAFE_INTEGER, limit);
      let found = 0;
      while (rows.next().done !== true) found++;
      return found;
    }
    const conditions = conditionsOf(filter, this.hints(filter));
    let statement = this.counts.get(conditions.shape);
    if (statement === undefined) {
      const where = conditions.sql.length === 0 ? '' : `WHERE ${conditions.sql.join(' AND ')}`;
      statement = this.db.prepare<unknown[], { n: number }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM deliveries d ${where} LIMIT ?)`,
      );
      this.counts.set(conditions.shape, statement);
    }
    return statement.get(...conditions.values, limit)?.n ?? 0;
  }

  private hints(filter: DeliveryFilter): PlanHints {
    const type = filter.eventType;
    const bound = type !== undefined && 'prefix' in type ? prefixBound(type.prefix) : undefined;
    let commonPrefix = false;
    if (type !== undefined && 'prefix' in type && bound !== undefined) {
      const matching =
        filter.source === undefined
          ? this.prefixCount.get(type.prefix, bound)
          : this.prefixCountOf.get(filter.source, type.prefix, bound);
      commonPrefix = (matching?.n ?? 0) > PREFIX_SORT_MOST;
    }
    return { buckets: filter.since === undefined && filter.until === undefined ? false : this.buckets(), commonPrefix };
  }

  private plain(conditions: Conditions): Statement<unknown[], DeliveryRow> {
    let statement = this.statements.get(conditions.shape);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], DeliveryRow>(
        `SELECT ${deliveryColumnsOf('d')} FROM deliveries d
          WHERE ${[...conditions.sql, 'd.seq < ?'].join(' AND ')} ORDER BY d.seq DESC LIMIT ?`,
      );
      this.statements.set(conditions.shape, statement);
    }
    return statement;
  }

  /**
   * The search index's candidates that meet the other conditions, newest
   * first, each delivery once (a large one is indexed as several rows, one
   * after the other) and read whole only then. The index is the outer loop
   * (CROSS JOIN), read in rowid order, so that a page stops early.
   */
  private *searched(conditions: Conditions, query: string, beforeSeq: number): Generator<DeliveryRow> {
    let statement = this.candidates.get(conditions.shape);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], { seq: number }>(
        `SELECT d.seq AS seq FROM delivery_text CROSS JOIN deliveries d ON d.seq = delivery_text.rowid / ${MAX_CHUNKS}
          WHERE ${['delivery_text MATCH ?', 'delivery_text.rowid < ?', ...conditions.sql].join(' AND ')}
          ORDER BY delivery_text.rowid DESC`,
      );
      this.candidates.set(conditions.shape, statement);
    }
    // Rowids are seq * MAX_CHUNKS: a bound past any seq there can be stays a safe integer.
    const below = Math.min(beforeSeq, Math.floor(Number.MAX_SAFE_INTEGER / MAX_CHUNKS)) * MAX_CHUNKS;
    let previous: number | undefined;
    for (const { seq } of statement.iterate(query, below, ...conditions.values)) {
      if (seq === previous) continue;
      previous = seq;
      const row = this.bySeq.get(seq);
      if (row !== undefined) yield row;
    }
  }
}
