import { Pool } from 'undici';
import { Database } from '../src/platform/db/sqlite/driver.js';

/**
 * The floor of draining an outbox on this machine, run by the `forward
 * drain` case on Reception's own SQLite file once its server has stopped:
 * reads the pending forwards of FLOOR_DESTINATION with their deliveries in
 * position order, POSTs each body (with its Content-Type and webhook-id)
 * to FLOOR_URL with undici, FLOOR_CONCURRENCY at a time, and marks them
 * `succeeded` FLOOR_BATCH at a time in one transaction (synchronous=FULL,
 * as Reception's default). No leases, no attempts, no logs: the cheapest
 * design that could do the job. Prints one line, `FLOOR_RESULT {json}`.
 */

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`forward-floor: ${name} is not set`);
  return value;
}

interface Row {
  position: number;
  id: string;
  content_type: string;
  raw: Buffer;
}

const file = setting('FLOOR_DB');
const destination = setting('FLOOR_DESTINATION');
const target = new URL(setting('FLOOR_URL'));
const concurrency = Number(setting('FLOOR_CONCURRENCY'));
const batchSize = Number(setting('FLOOR_BATCH'));
const READ_AHEAD = 1000;
/** The destination is the bench's own and answers 204: past this many failures, something is wrong. */
const MAX_FAILED_POSTS = 1000;

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
const read = db.prepare<[string, number, number], Row>(
  `SELECT f.position AS position, d.id AS id, d.content_type AS content_type, d.raw AS raw
   FROM forwards f JOIN deliveries d ON d.seq = f.delivery_seq
   WHERE f.status = 'pending' AND f.destination = ? AND f.position > ? ORDER BY f.position LIMIT ?`,
);
const markDone = db.prepare<[number, string]>(
  `UPDATE forwards SET status = 'succeeded', attempt_count = attempt_count + 1, next_attempt_at = NULL, updated_at = ?
   WHERE position IN (SELECT value FROM json_each(?))`,
);
const pool = new Pool(target.origin, { connections: concurrency });

async function drain(): Promise<{ forwards: number; failedPosts: number; commits: number }> {
  let cursor = 0;
  let queue: Row[] = [];
  let done: number[] = [];
  let forwards = 0;
  let failedPosts = 0;
  let commits = 0;
  const flush = (): void => {
    if (done.length === 0) return;
    markDone.run(Date.now(), JSON.stringify(done));
    forwards += done.length;
    commits++;
    done = [];
  };
  const nextRow = (): Row | undefined => {
    if (queue.length === 0) {
      queue = read.all(destination, cursor, READ_AHEAD);
      const last = queue.at(-1);
      if (last !== undefined) cursor = last.position;
    }
    return queue.shift();
  };
  const worker = async (): Promise<void> => {
    for (let row = nextRow(); row !== undefined; row = nextRow()) {
      for (;;) {
        try {
          const response = await pool.request({
            path: target.pathname,
            method: 'POST',
            body: row.raw,
            headers: { 'content-type': row.content_type, 'webhook-id': row.id },
          });
          await response.body.dump();
          if (response.statusCode >= 200 && response.statusCode < 300) break;
        } catch {
          // sent again below
        }
        failedPosts++;
        if (failedPosts > MAX_FAILED_POSTS) throw new Error(`forward-floor: ${failedPosts} POSTs to ${target.origin} failed`);
      }
      done.push(row.position);
      if (done.length >= batchSize) flush();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  flush();
  return { forwards, failedPosts, commits };
}

const cpuBefore = process.cpuUsage();
const started = performance.now();
const result = await drain();
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
await pool.close();
db.close();
process.stdout.write(`FLOOR_RESULT ${JSON.stringify({ ...result, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`);
