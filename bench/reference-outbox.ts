import { Pool } from 'undici';
import type { Database } from '../src/platform/db/sqlite/driver.js';

/**
 * The floor of forwarding as a running service, for the `ref outbox floor`
 * case (bench/reference-server.ts, REFERENCE_MODE=sqlite-full-outbox): the
 * prototype stores each delivery and a row of `outbox` in one transaction,
 * and this pump POSTs them in seq order with undici, `concurrency` at a
 * time, and marks them done in batches: one transaction per 100 done, or
 * 10 ms after the first of a batch.
 * No leases, no attempts table, no backoff, no logs, no metrics: a failed
 * POST is simply sent again. Nothing that does the job can do less.
 */
export interface OutboxPump {
  /** New outbox rows were committed: send them. */
  wake(): void;
  /** Counts since the start, for `GET /stats`. */
  stats(): { forwarded: number };
}

/** Done marks per transaction, at most; and how long the first of a batch waits for the others. */
const SETTLE_BATCH = 100;
const SETTLE_WAIT_MS = 10;

interface Row {
  seq: number;
  id: string;
  raw: Buffer;
}

export function outboxPump(db: Database, destination: string, concurrency: number): OutboxPump {
  db.exec('CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0)');
  const read = db.prepare<[number, number], Row>(
    `SELECT d.seq AS seq, d.id AS id, d.raw AS raw FROM outbox o JOIN deliveries d ON d.seq = o.seq
     WHERE o.done = 0 AND o.seq > ? ORDER BY o.seq LIMIT ?`,
  );
  const markDone = db.prepare<[string]>('UPDATE outbox SET done = 1 WHERE seq IN (SELECT value FROM json_each(?))');
  const target = new URL(destination);
  const pool = new Pool(target.origin, { connections: concurrency });
  let cursor = 0;
  let inflight = 0;
  let forwarded = 0;
  let done: number[] = [];
  let settleTimer: NodeJS.Timeout | undefined;
  const retry: Row[] = [];

  const settle = (): void => {
    clearTimeout(settleTimer);
    settleTimer = undefined;
    const batch = done;
    done = [];
    markDone.run(JSON.stringify(batch));
    forwarded += batch.length;
  };

  const send = (row: Row): void => {
    inflight++;
    pool
      .request({
        path: target.pathname,
        method: 'POST',
        body: row.raw,
        headers: { 'content-type': 'application/json', 'webhook-id': row.id },
      })
      .then(
        async (response) => {
          await response.body.dump();
          return response.statusCode >= 200 && response.statusCode < 300;
        },
        () => false,
      )
      .then((ok) => {
        inflight--;
        if (ok) {
          done.push(row.seq);
          if (done.length >= SETTLE_BATCH) settle();
          else settleTimer ??= setTimeout(settle, SETTLE_WAIT_MS);
        } else {
          retry.push(row);
        }
        pump();
      });
  };

  const pump = (): void => {
    while (inflight < concurrency && retry.length > 0) send(retry.shift() as Row);
    const room = concurrency - inflight;
    if (room <= 0) return;
    for (const row of read.all(cursor, room)) {
      cursor = row.seq;
      send(row);
    }
  };

  return { wake: pump, stats: () => ({ forwarded }) };
}
