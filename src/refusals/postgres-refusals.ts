import {
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
import type { PostgresRunner } from '../platform/db/postgres/runner.js';
import { holdable } from '../platform/db/postgres/text-values.js';

/**
 * Held by every transaction that writes refusals, from every instance: seq
 * order is then commit order among refusals (a reader that follows the
 * list misses none), and the counts are never updated in two orders at
 * once. Never the inbox's lock: refusals do not wait for deliveries, nor
 * deliveries for refusals.
 */
const REFUSAL_LOCK = 7_305_162_022;

/** Inserts the batch and adds it to the counts of its sources, in one statement; answers each source's count. */
const INSERT_AND_COUNT = `WITH inserted AS (
    INSERT INTO refusals (id, source, received_at, method, status, code, detail, content_type, size, headers, preview)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::text[],
      $9::bigint[], $10::text[], $11::bytea[])
    RETURNING source)
  INSERT INTO refusal_counts (source, count) SELECT source, count(*) FROM inserted GROUP BY source
  ON CONFLICT (source) DO UPDATE SET count = refusal_counts.count + excluded.count
  RETURNING source, count`;

/** Deletes the oldest $2 refusals of source $1 and takes them off its count; answers how many. */
const PRUNE_SOURCE = `WITH deleted AS (
    DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals WHERE source = $1 ORDER BY seq LIMIT $2) RETURNING 1)
  UPDATE refusal_counts SET count = count - (SELECT count(*) FROM deleted) WHERE source = $1
  RETURNING (SELECT count(*) FROM deleted) AS deleted`;

/** Takes the rows `deleted` (a CTE with their sources) off the counts, per source and in all. */
const UNCOUNT = `by_source AS (SELECT source, count(*) AS n FROM deleted GROUP BY source),
  per_source AS (UPDATE refusal_counts c SET count = c.count - b.n FROM by_source b WHERE c.source = b.source RETURNING 1)
  UPDATE refusal_total SET count = count - (SELECT count(*) FROM deleted)
  RETURNING (SELECT count(*) FROM deleted) AS deleted`;

/** Deletes the oldest $1 refusals of every source, with their counts. */
const PRUNE_OLDEST = `WITH deleted AS (DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals ORDER BY seq LIMIT $1) RETURNING source),
  ${UNCOUNT}`;

/** Deletes at most $2 refusals received before $1, with their counts. */
const PRUNE_BEFORE = `WITH deleted AS (DELETE FROM refusals WHERE seq IN (
    SELECT seq FROM refusals WHERE received_at < $1 ORDER BY received_at LIMIT $2) RETURNING source),
  ${UNCOUNT}`;

const BEGIN_WRITE = `SET LOCAL synchronous_commit = off; SELECT pg_advisory_xact_lock(${REFUSAL_LOCK})`;

/**
 * The refusals on PostgreSQL (see `RefusalStore`). A refusal is not worth a
 * wait for the WAL to reach the disk: its transactions commit with
 * `synchronous_commit = off`, which a crash of the database server may cost
 * the last of them, never a delivery.
 */
export class PostgresRefusals implements RefusalStore {
  constructor(private readonly db: PostgresRunner) {}

  /** Six round trips in the steady state of a flood (one source at its bound): the transaction's, and four statements. */
  async add(batch: readonly NewRefusal[], bounds: RefusalBounds): Promise<void> {
    if (batch.length === 0) return;
    const rows = batch.map(holdableRefusal);
    await this.db.transaction(async (client) => {
      await client.query(BEGIN_WRITE);
      const counts = await client.query<{ source: string; count: string }>(INSERT_AND_COUNT, [
        rows.map((r) => r.id),
        rows.map((r) => sourceKey(r.source)),
        rows.map((r) => r.receivedAt),
        rows.map((r) => r.method),
        rows.map((r) => r.status),
        rows.map((r) => r.code),
        rows.map((r) => r.detail),
        rows.map((r) => r.contentType),
        rows.map((r) => r.size),
        rows.map((r) => JSON.stringify(r.headers)),
        rows.map((r) => r.preview),
      ]);
      let added = rows.length;
      for (const { source, count } of counts.rows) {
        const over = Number(count) - bounds.perSource;
        if (over <= 0) continue;
        const pruned = await client.query<{ deleted: string }>(PRUNE_SOURCE, [source, over]);
        added -= Number(pruned.rows[0]?.deleted ?? 0);
      }
      const after = await client.query<{ count: string }>('UPDATE refusal_total SET count = count + $1 RETURNING count', [added]);
      const excess = Number(after.rows[0]?.count ?? 0) - bounds.total;
      if (excess > 0) {
        await client.query(PRUNE_OLDEST, [excess]);
        await client.query('DELETE FROM refusal_counts WHERE count <= 0');
      }
    });
  }

  async list(query: RefusalQuery): Promise<StoredRefusal[]> {
    if (query.source !== undefined && !holdable(query.source)) return [];
    const before = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const result =
      query.source === undefined
        ? await this.db.execute<RefusalRow>(`SELECT ${REFUSAL_COLUMNS} FROM refusals WHERE seq < $1 ORDER BY seq DESC LIMIT $2`, [
            before,
            query.limit,
          ])
        : await this.db.execute<RefusalRow>(
            `SELECT ${REFUSAL_COLUMNS} FROM refusals WHERE source = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`,
            [query.source, before, query.limit],
          );
    return result.rows.map(refusalFromRow);
  }

  async count(source?: string | null): Promise<number> {
    if (source === undefined) {
      const result = await this.db.execute<{ count: string }>('SELECT count FROM refusal_total');
      return Number(result.rows[0]?.count ?? 0);
    }
    if (source !== null && !holdable(source)) return 0;
    const result = await this.db.execute<{ count: string }>('SELECT count FROM refusal_counts WHERE source = $1', [
      sourceKey(source),
    ]);
    return Number(result.rows[0]?.count ?? 0);
  }

  async pruneOlderThan(before: number, limit: number): Promise<number> {
    return this.db.transaction(async (client) => {
      await client.query(BEGIN_WRITE);
      const pruned = await client.query<{ deleted: string }>(PRUNE_BEFORE, [before, limit]);
      const deleted = Number(pruned.rows[0]?.deleted ?? 0);
      if (deleted > 0) await client.query('DELETE FROM refusal_counts WHERE count <= 0');
      return deleted;
    });
  }
}

// eslint-disable-next-line no-control-regex
const UNHOLDABLE_CHARS = /\u0000|\p{Cs}/gu;

/**
 * A refusal as PostgreSQL's text columns can hold it: NUL and lone
 * surrogates (see text-values.ts) become U+FFFD. None reach here from the
 * receiver (header values cannot hold NUL, source names are checked), but a
 * batch that PostgreSQL refused would be lost whole.
 */
function holdableRefusal(r: NewRefusal): NewRefusal {
  const fields = [r.id, r.source ?? '', r.method, r.code, r.detail, r.contentType];
  if (fields.every(holdable)) return r;
  const fix = (text: string): string => text.replace(UNHOLDABLE_CHARS, '\ufffd');
  return {
    ...r,
    id: fix(r.id),
    source: r.source === null ? null : fix(r.source),
    method: fix(r.method),
    code: fix(r.code),
    detail: fix(r.detail),
    contentType: fix(r.contentType),
  };
}
