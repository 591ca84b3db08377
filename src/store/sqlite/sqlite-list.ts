import type { Statement } from 'better-sqlite3';
import type { Database } from './driver.js';
import { deliveryColumnsOf, type DeliveryRow } from '../delivery-row.js';
import { prefixBound, type DeliveryFilter } from '../delivery-filter.js';
import type { HeaderList } from '../header-list.js';
import { containsText, searchNeedle } from '../search-text.js';
import { MAX_CHUNKS, trigramQuery } from './sqlite-search.js';

/** A filter's conditions on `deliveries d`, and the values of their parameters in order. */
interface Conditions {
  /** What the conditions are, without their values: the key of the prepared statement. */
  shape: string;
  sql: string[];
  values: unknown[];
}

function conditionsOf(filter: DeliveryFilter): Conditions {
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
    else add('prefix', 'd.event_type >= ? AND d.event_type < ?', type.prefix, bound);
  }
  if (filter.verification !== undefined) add('verification', 'd.verification_status = ?', filter.verification);
  if (filter.since !== undefined) add('since', 'd.received_at >= ?', filter.since);
  if (filter.until !== undefined) add('until', 'd.received_at < ?', filter.until);
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

  constructor(private readonly db: Database) {
    this.bySeq = db.prepare<[number], DeliveryRow>(`SELECT ${deliveryColumnsOf('d')} FROM deliveries d WHERE d.seq = ?`);
  }

  /** The matching deliveries below `beforeSeq`, newest first, read as they are asked for. */
  *rows(filter: DeliveryFilter, beforeSeq: number, limit: number): Generator<DeliveryRow> {
    if (limit <= 0) return;
    const conditions = conditionsOf(filter);
    if (filter.text === undefined) {
      yield* this.plain(conditions).iterate(...conditions.values, beforeSeq, limit);
      return;
    }
    const needle = searchNeedle(filter.text);
    const query = trigramQuery(filter.text);
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
    const conditions = conditionsOf(filter);
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
