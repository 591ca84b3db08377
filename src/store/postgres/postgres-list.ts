import { DELIVERY_COLUMNS, deliveryColumnsOf, type DeliveryRow } from '../delivery-row.js';
import type { DeletedBatch } from '../inbox-store.js';
import { prefixBound, type DeliveryFilter } from '../delivery-filter.js';
import type { PostgresRunner } from './postgres-outbox.js';
import { holdable } from './text-values.js';
import { searchNeedle } from '../search-text.js';

/** A filter's conditions on `deliveries d` with numbered parameters, and their values in order. */
export interface PgConditions {
  sql: string[];
  values: unknown[];
}

/** `%`, `_` and `\` taken literally in a LIKE pattern (whose escape is `\`). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * The conditions of `filter`, numbered from `$1`. Undefined when no row can
 * match: a value that PostgreSQL's text cannot hold (NUL, a lone surrogate)
 * is in no row, and PostgreSQL would refuse the query.
 * `event_type COLLATE "C"`: the indexes of migration 000008 are in code point order.
 */
export function pgConditionsOf(filter: DeliveryFilter): PgConditions | undefined {
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
    else sql.push(`d.event_type COLLATE "C" >= ${param(type.prefix)} AND d.event_type COLLATE "C" < ${param(bound)}`);
  }
  if (filter.verification !== undefined) sql.push(`d.verification_status = ${param(filter.verification)}`);
  if (filter.since !== undefined) sql.push(`d.received_at >= ${param(filter.since)}`);
  if (filter.until !== undefined) sql.push(`d.received_at < ${param(filter.until)}`);
  if (filter.text !== undefined) {
    // The text is stored with the same replacements as the needle (search-text.ts); ILIKE ignores case
    // (every script in a UTF-8 locale, ASCII in the "C" locale), and pg_trgm's index finds the candidates.
    const pattern = `%${likeLiteral(searchNeedle(filter.text))}%`;
    sql.push(`d.seq IN (SELECT t.seq FROM delivery_text t WHERE t.text ILIKE ${param(pattern)})`);
  }
  return { sql, values };
}

/**
 * The matching deliveries below `beforeSeq`, newest first: at most `limit`,
 * and with `maxBytes`, no more than reach it (see ListQuery). With a byte
 * bound, the filtered query reads each delivery's size only (`octet_length`
 * reads a stored bytea's size, not its bytes), then the page's rows by seq:
 * the filter runs once.
 */
export async function listPage(
  runner: PostgresRunner,
  filter: DeliveryFilter,
  beforeSeq: number,
  limit: number,
  maxBytes: number | undefined,
): Promise<DeliveryRow[]> {
  const conditions = pgConditionsOf(filter);
  if (conditions === undefined || limit <= 0) return [];
  const { sql, values } = conditions;
  const where = [...sql, `d.seq < $${values.length + 1}`].join(' AND ');
  const tail = `FROM deliveries d WHERE ${where} ORDER BY d.seq DESC LIMIT $${values.length + 2}`;
  if (maxBytes === undefined) {
    return (await runner.execute<DeliveryRow>(`SELECT ${deliveryColumnsOf('d')} ${tail}`, [...values, beforeSeq, limit])).rows;
  }
  const sizes = await runner.execute<{ seq: string; size: number }>(`SELECT d.seq, octet_length(d.raw) AS size ${tail}`, [
    ...values,
    beforeSeq,
    limit,
  ]);
  const seqs: string[] = [];
  let bytes = 0;
  for (const row of sizes.rows) {
    seqs.push(row.seq);
    bytes += row.size;
    if (bytes >= maxBytes) break;
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
