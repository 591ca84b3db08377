import {
  byMinute,
  trafficFromRow,
  type TrafficBucket,
  type TrafficIncrement,
  type TrafficQuery,
  type TrafficRow,
  type TrafficStore,
} from './traffic.js';
import type { PostgresRunner } from '../platform/db/postgres/runner.js';
import { holdable } from '../platform/db/postgres/text-values.js';

const COUNT_REFUSED = `INSERT INTO traffic_counts AS t (source, minute, writer, refused)
  SELECT c.source, c.minute, pg_backend_pid(), c.count FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS c (source, minute, count)
  ON CONFLICT (source, minute, writer) DO UPDATE SET refused = t.refused + excluded.refused`;

const READ = `SELECT source, minute - minute % $1 AS start, sum(delivered) AS delivered, sum(refused) AS refused,
    sum(forwarded) AS forwarded, sum(forward_failed) AS forward_failed, sum(dead) AS dead
  FROM traffic_counts WHERE source = ANY($2::text[]) AND minute >= $3 AND minute < $4
  GROUP BY source, start ORDER BY source, start`;

const PRUNE = `DELETE FROM traffic_counts WHERE ctid IN (
  SELECT ctid FROM traffic_counts WHERE minute < $1 ORDER BY minute LIMIT $2)`;

/** The traffic counts in PostgreSQL (migration 000010); forward outcomes are counted by its trigger. */
export class PostgresTraffic implements TrafficStore {
  constructor(private readonly db: PostgresRunner) {}

  async addRefused(increments: readonly TrafficIncrement[]): Promise<void> {
    const rows = byMinute(increments.filter((inc) => holdable(inc.source)));
    if (rows.length === 0) return;
    await this.db.execute(COUNT_REFUSED, [rows.map((r) => r.source), rows.map((r) => r.minute), rows.map((r) => r.refused)]);
  }

  async read(query: TrafficQuery): Promise<TrafficBucket[]> {
    const sources = query.sources.filter(holdable);
    if (sources.length === 0) return [];
    const result = await this.db.execute<TrafficRow>(READ, [query.bucketMs, sources, query.from, query.to]);
    return result.rows.map(trafficFromRow);
  }

  async pruneOlderThan(before: number, limit: number): Promise<number> {
    return (await this.db.execute(PRUNE, [before, limit])).rowCount ?? 0;
  }
}
