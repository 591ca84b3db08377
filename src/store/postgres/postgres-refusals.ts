import type pg from 'pg';
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
} from '../refusals.js';
import type { PostgresRunner } from './postgres-outbox.js';
import { holdable } from './text-values.js';

/**
 * Held by every transaction that writes refusals, from every instance: seq
 * order is then commit order among refusals (a reader that follows the
 * list misses none), and the counts are never updated in two orders at
 * once. Never the inbox's lock: refusals do not wait for deliveries, nor
 * deliveries for refusals.
 */
const REFUSAL_LOCK = 7_305_162_022;

const INSERT = `INSERT INTO refusals (id, source, received_at, method, status, code, detail, content_type, size, headers, preview)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::text[],
    $9::bigint[], $10::text[], $11::bytea[])`;

const ADD_COUNTS = `INSERT INTO refusal_counts (source, count) SELECT * FROM unnest($1::text[], $2::bigint[])
  ON CONFLICT (source) DO UPDATE SET count = refusal_counts.count + excluded.count
  RETURNING source, count`;

const SUBTRACT_COUNTS = `UPDATE refusal_counts c SET count = c.count - d.n
  FROM unnest($1::text[], $2::bigint[]) AS d (source, n) WHERE c.source = d.source`;

/**
 * The refusals on PostgreSQL (see `RefusalStore`). A refusal is not worth a
 * wait for the WAL to reach the disk: its transactions commit with
 * `synchronous_commit = off`, which a crash of the database server may cost
 * the last of them, never a delivery.
 */
export class PostgresRefusals implements RefusalStore {
  constructor(private readonly db: PostgresRunner) {}

  async add(batch: readonly NewRefusal[], bounds: RefusalBounds): Promise<void> {
    if (batch.length === 0) return;
    const rows = batch.map(holdableRefusal);
    await this.db.transaction(async (client) => {
      await client.query(`SET LOCAL synchronous_commit = off; SELECT pg_advisory_xact_lock(${REFUSAL_LOCK})`);
      await client.query(INSERT, [
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
      const added = [...countBySource(rows)];
      const counts = await client.query<{ source: string; count: string }>(ADD_COUNTS, [
        added.map(([source]) => source),
        added.map(([, n]) => n),
      ]);
      let total = rows.length;
      for (const { source, count } of counts.rows) {
        const over = Number(count) - bounds.perSource;
        if (over <= 0) continue;
        const deleted = await client.query(
          'DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals WHERE source = $1 ORDER BY seq LIMIT $2)',
          [source, over],
        );
        const n = deleted.rowCount ?? 0;
        await client.query('UPDATE refusal_counts SET count = count - $2 WHERE source = $1', [source, n]);
        total -= n;
      }
      const after = await client.query<{ count: string }>('UPDATE refusal_total SET count = count + $1 RETURNING count', [total]);
      const excess = Number(after.rows[0]?.count ?? 0) - bounds.total;
      if (excess > 0) {
        const deleted = await client.query<{ source: string }>(
          'DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals ORDER BY seq LIMIT $1) RETURNING source',
          [excess],
        );
        await uncount(
          client,
          deleted.rows.map((row) => row.source),
        );
      }
      await client.query('DELETE FROM refusal_counts WHERE count <= 0');
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
      await client.query(`SET LOCAL synchronous_commit = off; SELECT pg_advisory_xact_lock(${REFUSAL_LOCK})`);
      const deleted = await client.query<{ source: string }>(
        `DELETE FROM refusals WHERE seq IN (SELECT seq FROM refusals WHERE received_at < $1 ORDER BY received_at LIMIT $2)
         RETURNING source`,
        [before, limit],
      );
      const sources = deleted.rows.map((row) => row.source);
      if (sources.length > 0) {
        await uncount(client, sources);
        await client.query('DELETE FROM refusal_counts WHERE count <= 0');
      }
      return sources.length;
    });
  }
}

/** Takes deleted rows' sources off the counts (per source and in all). */
async function uncount(client: pg.PoolClient, sources: readonly string[]): Promise<void> {
  const bySource = new Map<string, number>();
  for (const source of sources) bySource.set(source, (bySource.get(source) ?? 0) + 1);
  const entries = [...bySource];
  await client.query(SUBTRACT_COUNTS, [entries.map(([source]) => source), entries.map(([, n]) => n)]);
  await client.query('UPDATE refusal_total SET count = count - $1', [sources.length]);
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
