import { DELIVERY_COLUMNS, type DeliveryRow } from '../deliveries/delivery-row.js';
import type { DeletedBatch } from '../deliveries/delivery-store.js';
import { prefixBound, timeWindow, type DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { PostgresRunner } from '../platform/db/postgres/runner.js';
import { holdable } from '../platform/db/postgres/text-values.js';
import { searchNeedle } from '../search/search-text.js';

/** A filter's conditions on `deliveries d` with numbered parameters, and their values in order. */
export interface PgConditions {
  sql: string[];
  values: unknown[];
}

/** `%`, `_` and `\` taken literally in a LIKE pattern (whose escape is `\`). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** What the list knows that the planner's estimates may miss. */
export interface PgHints {
  /** The time buckets cover every delivery: since/until also bound the seqs to those their buckets span. */
  buckets: boolean;
  /** The type prefix matches so many deliveries that reading the newest first finds a page soonest (see sqlite-list.ts). */
  commonPrefix: boolean;
}

const NO_HINTS: PgHints = { buckets: false, commonPrefix: false };

/** The ILIKE pattern of a search: the text taken literally, anywhere. */
function searchPattern(text: string): string {
  // The text is stored with the same replacements as the needle (search-text.ts); ILIKE ignores case
  // (every script in a UTF-8 locale, ASCII in the "C" locale), and pg_trgm's index finds the candidates.
  return `%${likeLiteral(searchNeedle(text))}%`;
}

/**
 * The conditions of `filter`, numbered from `$1` (`text` only when
 * `withText`). Undefined when no row can match: a value that PostgreSQL's
 * text cannot hold (NUL, a lone surrogate) is in no row, and PostgreSQL
 * would refuse the query. `event_type COLLATE "C"`: the indexes of
 * migration 000008 are in code point order; a common prefix is compared as
 * an expression no index has (`|| ''`), so that the planner reads the
 * newest first.
 */
export function pgConditionsOf(filter: DeliveryFilter, hints: PgHints = NO_HINTS, withText = true): PgConditions | undefined {
  const sql: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (filter.source !== undefined) {
    if (!holdable(filter.source)) return undefined;
    sql.push(`d.source = ${param(filter.source)}`);
  }
  const type = filter.eventType;
  if (type !== undefined && 'exact' in type) {
    if (!holdable(type.exact)) return undefined;
    sql.push(`d.event_type COLLATE "C" = ${param(type.exact)}`);
  }
  if (type !== undefined && 'prefix' in type) {
    if (!holdable(type.prefix)) return undefined;
    const bound = prefixBound(type.prefix);
    if (type.prefix === '') sql.push(`d.event_type COLLATE "C" > ''`);
    else if (bound === undefined) sql.push(`d.event_type COLLATE "C" >= ${param(type.prefix)}`);
    else {
      const column = hints.commonPrefix ? `(d.event_type || '')` : 'd.event_type';
      sql.push(`${column} COLLATE "C" >= ${param(type.prefix)} AND ${column} COLLATE "C" < ${param(bound)}`);
    }
  }
  if (filter.verification !== undefined) sql.push(`d.verification_status = ${param(filter.verification)}`);
  if (filter.since !== undefined) sql.push(`d.received_at >= ${param(filter.since)}`);
  if (filter.until !== undefined) sql.push(`d.received_at < ${param(filter.until)}`);
  const window = hints.buckets ? timeWindow(filter) : undefined;
  if (window !== undefined) {
    const first = param(window.first);
    const last = param(window.last);
    sql.push(
      `d.seq >= (SELECT coalesce(min(min_seq), 0) FROM time_buckets WHERE bucket BETWEEN ${first} AND ${last})`,
      `d.seq <= (SELECT coalesce(max(max_seq), 0) FROM time_buckets WHERE bucket BETWEEN ${first} AND ${last})`,
    );
  }
  if (filter.text !== undefined && withText) {
    sql.push(`d.seq IN (SELECT t.seq FROM delivery_text t WHERE t.text ILIKE ${param(searchPattern(filter.text))})`);
  }
  return { sql, values };
}

/**
 * Candidates a search reads newest first before it asks the trigram index:
 * a common word is found among the newest deliveries at once, where the
 * index would hand over every delivery that has it, to be sorted (750 ms
 * for "widget" on 200,000); a rare one is not, and the index finds it.
 */
const SEARCH_NEWEST = 1000;

interface Sized {
  seq: string;
  size: number;
}

/**
 * The seqs and sizes of the matching deliveries below `beforeSeq`, newest
 * first, at most `limit`. `octet_length` reads a stored bytea's size, not
 * its bytes. A search first checks the newest SEARCH_NEWEST deliveries that
 * meet the other filters, then (for the rest of the page) asks the index
 * below them.
 */
async function matchingSizes(
  runner: PostgresRunner,
  filter: DeliveryFilter,
  hints: PgHints,
  beforeSeq: number,
  limit: number,
): Promise<Sized[]> {
  const conditions = pgConditionsOf(filter, hints, filter.text === undefined);
  if (conditions === undefined) return [];
  const { sql, values } = conditions;
  const where = (below: number): string => [...sql, `d.seq < $${below}`].join(' AND ');
  if (filter.text === undefined) {
    const rows = await runner.execute<Sized>(
      `SELECT d.seq, octet_length(d.raw) AS size FROM deliveries d WHERE ${where(values.length + 1)}
        ORDER BY d.seq DESC LIMIT $${values.length + 2}`,
      [...values, beforeSeq, limit],
    );
    return rows.rows;
  }
  const pattern = searchPattern(filter.text);
  const newest = await runner.execute<Sized & { hit: boolean | null }>(
    `SELECT c.seq, c.size, t.text ILIKE $${values.length + 3} AS hit
      FROM (SELECT d.seq, octet_length(d.raw) AS size FROM deliveries d WHERE ${where(values.length + 1)}
        ORDER BY d.seq DESC LIMIT $${values.length + 2}) AS c
      LEFT JOIN delivery_text t ON t.seq = c.seq ORDER BY c.seq DESC`,
    [...values, beforeSeq, SEARCH_NEWEST, pattern],
  );
  const found = newest.rows.filter((row) => row.hit === true).slice(0, limit);
  const lowest = newest.rows.at(-1)?.seq;
  if (found.length >= limit || newest.rows.length < SEARCH_NEWEST || lowest === undefined) return found;
  const rest = await runner.execute<Sized>(
    `SELECT d.seq, octet_length(d.raw) AS size FROM deliveries d WHERE ${where(values.length + 1)}
      AND d.seq IN (SELECT t.seq FROM delivery_text t WHERE t.text ILIKE $${values.length + 3})
      ORDER BY d.seq DESC LIMIT $${values.length + 2}`,
    [...values, Number(lowest), limit - found.length, pattern],
  );
  return [...found, ...rest.rows];
}

/** Whether a type prefix matches more deliveries than are worth sorting, as the counts per type tell. */
async function commonPrefix(runner: PostgresRunner, filter: DeliveryFilter): Promise<boolean> {
  const type = filter.eventType;
  if (type === undefined || !('prefix' in type) || !holdable(type.prefix)) return false;
  const bound = prefixBound(type.prefix);
  if (bound === undefined) return false;
  const values: unknown[] = [type.prefix, bound];
  let source = '';
  if (filter.source !== undefined && holdable(filter.source)) {
    values.push(filter.source);
    source = ' AND source = $3';
  }
  const result = await runner.execute<{ n: string | null }>(
    `SELECT sum(count) AS n FROM event_types WHERE event_type COLLATE "C" >= $1 AND event_type COLLATE "C" < $2${source}`,
    values,
  );
  return Number(result.rows[0]?.n ?? 0) > PREFIX_SORT_MOST;
}

/** As in sqlite-list.ts: the deliveries of a type prefix worth sorting by seq, at most. */
const PREFIX_SORT_MOST = 5000;

/**
 * The matching deliveries below `beforeSeq`, newest first: at most `limit`,
 * and with `maxBytes`, no more than reach it (see ListQuery): their sizes
 * first (matchingSizes), then the page's rows by seq, so that the filter
 * runs once and no body is read that the page leaves out.
 */
export async function listPage(
  runner: PostgresRunner,
  filter: DeliveryFilter,
  beforeSeq: number,
  limit: number,
  maxBytes: number | undefined,
  buckets: boolean,
): Promise<DeliveryRow[]> {
  if (limit <= 0) return [];
  const hints: PgHints = { buckets, commonPrefix: await commonPrefix(runner, filter) };
  const sizes = await matchingSizes(runner, filter, hints, beforeSeq, limit);
  const seqs: string[] = [];
  let bytes = 0;
  for (const row of sizes) {
    seqs.push(row.seq);
    bytes += row.size;
    if (maxBytes !== undefined && bytes >= maxBytes) break;
  }
  if (seqs.length === 0) return [];
  return (
    await runner.execute<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq = ANY($1::bigint[]) ORDER BY seq DESC`,
      [seqs],
    )
  ).rows;
}

/** Deletes at most `limit` of the matching deliveries below `beforeSeq`, newest first, in one statement. */
export async function deleteMatching(
  runner: PostgresRunner,
  filter: DeliveryFilter,
  beforeSeq: number,
  limit: number,
): Promise<DeletedBatch> {
  const conditions = pgConditionsOf(filter);
  if (conditions === undefined || limit <= 0) return { deleted: 0, lowestSeq: undefined };
  const { sql, values } = conditions;
  const where = [...sql, `d.seq < $${values.length + 1}`].join(' AND ');
  const result = await runner.execute<{ seq: string }>(
    `DELETE FROM deliveries WHERE seq IN (
      SELECT d.seq FROM deliveries d WHERE ${where} ORDER BY d.seq DESC LIMIT $${values.length + 2})
      RETURNING seq`,
    [...values, beforeSeq, limit],
  );
  const seqs = result.rows.map((row) => Number(row.seq));
  return { deleted: seqs.length, lowestSeq: seqs.length === 0 ? undefined : Math.min(...seqs) };
}

/** How many deliveries match, counted up to `limit`. */
export async function countMatching(runner: PostgresRunner, filter: DeliveryFilter, limit: number): Promise<number> {
  const conditions = pgConditionsOf(filter);
  if (conditions === undefined) return 0;
  const { sql, values } = conditions;
  const where = sql.length === 0 ? '' : `WHERE ${sql.join(' AND ')}`;
  const result = await runner.execute<{ n: string }>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM deliveries d ${where} LIMIT $${values.length + 1}) AS matching`,
    [...values, limit],
  );
  return Number(result.rows[0]?.n ?? 0);
}
