import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { DELIVERY_COLUMNS, deliveryFromRow, storedEventType, type DeliveryRow } from '../deliveries/delivery-row.js';
import type { HeaderList } from '../platform/http/header-list.js';
import type { DeriveEventType, IndexBudget, IndexProgress } from '../deliveries/delivery-store.js';
import { searchText } from './search-text.js';
import { BucketSpans } from '../deliveries/delivery-filter.js';
import { rowsWithin } from '../platform/db/step-reading.js';
import type { PostgresRunner } from '../platform/db/postgres/runner.js';

/**
 * The work behind the commits on PostgreSQL (migration 000008), one short
 * transaction per step: the search text of new deliveries, in seq order
 * (written after their commit: pg_trgm's GIN index in the commit cost
 * receiving 45 % of its rate), then the one-time fill of deliveries stored
 * before event types and search existed, newest first (their type, its
 * count and their search text). The position row is locked for the step,
 * so instances that share the database take turns; the rows are locked
 * too, so that a delete waits for the step rather than leave a count or a
 * text behind. A step reads about READ_BYTES of rows, new and old together
 * (see rowsWithin): their sizes first, octet_length() of a TOASTed value
 * being its length alone, then the rows that fit, whole (a row's text is
 * indexed in one step, however large).
 */
export async function indexStep(runner: PostgresRunner, budget: IndexBudget, derive: DeriveEventType): Promise<IndexProgress> {
  return runner.transaction(async (client) => {
    const position = await client.query<{ next_seq: string; backfill_seq: string }>(
      'SELECT next_seq, backfill_seq FROM index_position FOR UPDATE',
    );
    const row = position.rows[0];
    if (row === undefined) return { done: 0, more: false };
    const step: Step = { deadline: performance.now() + budget.maxMs, read: 0 };
    const newer = await indexNew(client, Number(row.next_seq), budget.maxRows, step);
    if (newer.more) return newer;
    const older = await backfill(client, Number(row.backfill_seq), budget.maxRows, step, derive);
    return { done: newer.done + older.done, more: older.more };
  });
}

/** What one step has to go by: its end, and the bytes of rows it has read (see rowsWithin). */
interface Step {
  deadline: number;
  read: number;
}

/** The sizes of rows, for rowsWithin: octet_length() of a TOASTed value reads its length, not the value. */
const SIZES = 'SELECT seq, octet_length(headers)::bigint + octet_length(raw) AS bytes FROM deliveries';

/** New deliveries from `next`, oldest first: their search text. */
async function indexNew(client: pg.PoolClient, next: number, maxRows: number, step: Step): Promise<IndexProgress> {
  const sizes = await client.query<{ seq: string; bytes: string }>(`${SIZES} WHERE seq >= $1 ORDER BY seq LIMIT $2`, [
    next,
    maxRows,
  ]);
  const within = rowsWithin(
    sizes.rows.map((row) => Number(row.bytes)),
    step,
  );
  const last = sizes.rows[within - 1]?.seq;
  if (last === undefined) return { done: 0, more: false };
  const rows = await client.query<{ seq: string; headers: string; raw: Buffer }>(
    'SELECT seq, headers, raw FROM deliveries WHERE seq >= $1 AND seq <= $2 ORDER BY seq FOR UPDATE',
    [next, last],
  );
  const seqs: string[] = [];
  const texts: string[] = [];
  for (const row of rows.rows) {
    seqs.push(row.seq);
    texts.push(searchText(JSON.parse(row.headers) as HeaderList, row.raw));
    if (performance.now() > step.deadline) break;
  }
  // Past the last row whose size was read (rows deleted since are gone), or the last indexed when time ran out.
  const reached = seqs.length === rows.rows.length ? Number(last) : Number(seqs[seqs.length - 1]);
  if (seqs.length > 0) await insertTexts(client, seqs, texts);
  await client.query('UPDATE index_position SET next_seq = $1', [reached + 1]);
  return {
    done: seqs.length,
    more: seqs.length < rows.rows.length || within < sizes.rows.length || sizes.rows.length === maxRows,
  };
}

/** Deliveries stored before migration 000008, newest first from `below`: typed, counted and indexed. */
async function backfill(
  client: pg.PoolClient,
  below: number,
  maxRows: number,
  step: Step,
  derive: DeriveEventType,
): Promise<IndexProgress> {
  if (below <= 0) return { done: 0, more: false };
  const sizes = await client.query<{ seq: string; bytes: string }>(`${SIZES} WHERE seq <= $1 ORDER BY seq DESC LIMIT $2`, [
    below,
    maxRows,
  ]);
  if (sizes.rows.length === 0) {
    await client.query('UPDATE index_position SET backfill_seq = 0');
    return { done: 0, more: false };
  }
  // New deliveries read this step leave less to read here; none, and the fill goes on at the next step.
  const within = rowsWithin(
    sizes.rows.map((row) => Number(row.bytes)),
    step,
  );
  const lowestRead = sizes.rows[within - 1]?.seq;
  if (lowestRead === undefined) return { done: 0, more: true };
  const rows = await client.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq <= $1 AND seq >= $2 ORDER BY seq DESC FOR UPDATE`,
    [below, lowestRead],
  );
  if (rows.rows.length === 0) {
    // All of them deleted since their sizes were read: past them.
    await client.query('UPDATE index_position SET backfill_seq = $1', [Number(lowestRead) - 1]);
    return { done: 0, more: Number(lowestRead) - 1 > 0 };
  }
  const seqs: string[] = [];
  const types: string[] = [];
  const texts: string[] = [];
  for (const row of rows.rows) {
    seqs.push(String(row.seq));
    types.push(row.event_type ?? storedEventType(derive(deliveryFromRow(row))));
    texts.push(searchText(JSON.parse(row.headers) as HeaderList, row.raw));
    if (performance.now() > step.deadline) break;
  }
  const buckets = new BucketSpans();
  for (const row of rows.rows.slice(0, seqs.length)) buckets.add(Number(row.received_at), Number(row.seq));
  await client.query(SPAN_BUCKETS, bucketValues(buckets));
  const typed = await client.query<{ source: string; event_type: string; received_at: string }>(
    `UPDATE deliveries d SET event_type = v.type FROM unnest($1::bigint[], $2::text[]) AS v (seq, type)
      WHERE d.seq = v.seq AND d.event_type IS NULL RETURNING d.source, d.event_type, d.received_at`,
    [seqs, types],
  );
  const counts = new Map<string, { source: string; type: string; count: number; last: number }>();
  for (const row of typed.rows) {
    const key = JSON.stringify([row.source, row.event_type]);
    const count = counts.get(key) ?? { source: row.source, type: row.event_type, count: 0, last: 0 };
    count.count++;
    count.last = Math.max(count.last, Number(row.received_at));
    counts.set(key, count);
  }
  if (counts.size > 0) {
    const entries = [...counts.values()];
    await client.query(COUNT_EVENT_TYPES, [
      entries.map((c) => c.source),
      entries.map((c) => c.type),
      entries.map((c) => c.count),
      entries.map((c) => c.last),
    ]);
  }
  await insertTexts(client, seqs, texts);
  const lowest = Number(seqs[seqs.length - 1]);
  await client.query('UPDATE index_position SET backfill_seq = $1', [lowest - 1]);
  return { done: seqs.length, more: lowest - 1 > 0 };
}

async function insertTexts(client: pg.PoolClient, seqs: readonly string[], texts: readonly string[]): Promise<void> {
  await client.query(
    'INSERT INTO delivery_text (seq, text) SELECT * FROM unnest($1::bigint[], $2::text[]) ON CONFLICT (seq) DO NOTHING',
    [seqs, texts],
  );
}

/** Widens the time buckets (see delivery-filter.ts): the append's and the fill's. */
export const SPAN_BUCKETS = `INSERT INTO time_buckets (bucket, min_seq, max_seq)
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])
  ON CONFLICT (bucket) DO UPDATE SET
    min_seq = least(time_buckets.min_seq, excluded.min_seq),
    max_seq = greatest(time_buckets.max_seq, excluded.max_seq)`;

/** SPAN_BUCKETS' parameters. */
export function bucketValues(buckets: BucketSpans): [number[], number[], number[]] {
  const entries = [...buckets.spans];
  return [entries.map(([bucket]) => bucket), entries.map(([, span]) => span.min), entries.map(([, span]) => span.max)];
}

/** True once every delivery stored before migration 000008 has its type and time bucket (see postgres-list.ts). */
export async function filled(runner: PostgresRunner): Promise<boolean> {
  const result = await runner.execute<{ backfill_seq: string }>('SELECT backfill_seq FROM index_position');
  return Number(result.rows[0]?.backfill_seq ?? 0) <= 0;
}

/** Adds counts per source and event type: the append's and the fill's. */
export const COUNT_EVENT_TYPES = `INSERT INTO event_types (source, event_type, count, last_received_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
  ON CONFLICT (source, event_type) DO UPDATE SET
    count = event_types.count + excluded.count,
    last_received_at = greatest(event_types.last_received_at, excluded.last_received_at)`;
