import type { Database } from '../platform/db/sqlite/driver.js';
import { describeStoreError } from '../deliveries/delivery-row.js';
import { StoreUnavailableError } from '../platform/db/store-errors.js';
import {
  byMinute,
  trafficFromRow,
  type TrafficBucket,
  type TrafficIncrement,
  type TrafficQuery,
  type TrafficRow,
  type TrafficStore,
} from './traffic.js';

/** The traffic counts in SQLite (migration 000008); forward outcomes are counted by its trigger. */
export class SqliteTraffic implements TrafficStore {
  private readonly q;
  private readonly addAll;

  constructor(private readonly db: Database) {
    this.q = {
      delivered: db.prepare<[string, number, number]>(
        `INSERT INTO traffic_counts (source, minute, delivered) VALUES (?, ?, ?)
         ON CONFLICT (source, minute) DO UPDATE SET delivered = delivered + excluded.delivered`,
      ),
      refused: db.prepare<[string, number, number]>(
        `INSERT INTO traffic_counts (source, minute, refused) VALUES (?, ?, ?)
         ON CONFLICT (source, minute) DO UPDATE SET refused = refused + excluded.refused`,
      ),
      read: db.prepare<[number, string, number, number, number], TrafficRow>(
        `SELECT source, minute - minute % ? AS start, sum(delivered) AS delivered, sum(refused) AS refused,
           sum(forwarded) AS forwarded, sum(forward_failed) AS forward_failed, sum(dead) AS dead
         FROM traffic_counts WHERE source IN (SELECT value FROM json_each(?)) AND minute >= ? AND minute < ?
         GROUP BY source, minute - minute % ? ORDER BY source, start`,
      ),
      prune: db.prepare<[number, number]>(
        `DELETE FROM traffic_counts WHERE (source, minute) IN (
           SELECT source, minute FROM traffic_counts WHERE minute < ? ORDER BY minute LIMIT ?)`,
      ),
    };
    const refused = this.q.refused;
    this.addAll = db.transaction((rows: ReadonlyArray<{ source: string; minute: number; refused: number }>) => {
      for (const row of rows) refused.run(row.source, row.minute, row.refused);
    });
  }

  /** Inside the append transaction: deliveries stored, one upsert per source and minute of the batch. */
  countDelivered(source: string, minute: number, count: number): void {
    this.q.delivered.run(source, minute, count);
  }

  async addRefused(increments: readonly TrafficIncrement[]): Promise<void> {
    if (increments.length === 0) return;
    try {
      this.addAll.immediate(byMinute(increments));
    } catch (error) {
      throw new StoreUnavailableError(`SQLite could not count refusals: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async read(query: TrafficQuery): Promise<TrafficBucket[]> {
    if (query.sources.length === 0) return [];
    return this.q.read
      .all(query.bucketMs, JSON.stringify(query.sources), query.from, query.to, query.bucketMs)
      .map(trafficFromRow);
  }

  async pruneOlderThan(before: number, limit: number): Promise<number> {
    return this.q.prune.run(before, limit).changes;
  }
}
