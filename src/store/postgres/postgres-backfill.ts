import { performance } from 'node:perf_hooks';
import { DELIVERY_COLUMNS, storedEventType, type DeliveryRow } from '../delivery-row.js';
import type { HeaderList } from '../header-list.js';
import type { DeriveEventType, IndexBudget, IndexProgress } from '../inbox-store.js';
import { searchText } from '../search-text.js';
import type { PostgresRunner } from './postgres-outbox.js';
import { deliveryFromPgRow } from './text-values.js';

/**
 * The background fill on PostgreSQL (migration 000008): deliveries stored
 * before event types and search existed get their type, its count and their
 * search text, newest first, one short transaction per step. New deliveries
 * need none of it: they are typed and indexed as they are stored. The
 * position row is locked for the step, so instances that share the
 * database take turns; the rows are locked too, so that a delete waits for
 * the step rather than leave a count or a text behind.
 */
export async function backfillStep(runner: PostgresRunner, budget: IndexBudget, derive: DeriveEventType): Promise<IndexProgress> {
  return runner.transaction(async (client) => {
    const position = await client.query<{ backfill_seq: string }>('SELECT backfill_seq FROM index_position FOR UPDATE');
    const below = Number(position.rows[0]?.backfill_seq ?? 0);
    if (below <= 0) return { done: 0, more: false };
    const rows = await client.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq <= $1 ORDER BY seq DESC LIMIT $2 FOR UPDATE`,
      [below, budget.maxRows],
    );
    if (rows.rows.length === 0) {
      await client.query('UPDATE index_position SET backfill_seq = 0');
      return { done: 0, more: false };
    }
    const deadline = performance.now() + budget.maxMs;
    const seqs: string[] = [];
    const types: string[] = [];
    const texts: string[] = [];
    for (const row of rows.rows) {
      const delivery = deliveryFromPgRow(row);
      seqs.push(String(row.seq));
      types.push(row.event_type ?? storedEventType(derive(delivery)));
      texts.push(searchText(JSON.parse(row.headers) as HeaderList, row.raw));
      if (performance.now() > deadline) break;
    }
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
    await client.query(
      `INSERT INTO delivery_text (seq, text) SELECT * FROM unnest($1::bigint[], $2::text[]) ON CONFLICT (seq) DO NOTHING`,
      [seqs, texts],
    );
    const lowest = Number(seqs[seqs.length - 1]);
    await client.query('UPDATE index_position SET backfill_seq = $1', [lowest - 1]);
    return { done: seqs.length, more: lowest - 1 > 0 };
  });
}

/** Adds counts per source and event type: the append's and the fill's. */
export const COUNT_EVENT_TYPES = `INSERT INTO event_types (source, event_type, count, last_received_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
  ON CONFLICT (source, event_type) DO UPDATE SET
    count = event_types.count + excluded.count,
    last_received_at = greatest(event_types.last_received_at, excluded.last_received_at)`;
