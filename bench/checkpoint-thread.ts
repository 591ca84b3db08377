import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/inbox/sqlite-store.js';
import { jsonBody } from './load.js';
import { storeDelivery } from './store-delivery.js';

/**
 * `node dist/bench/checkpoint-thread.js`: the SQLite store's commits with
 * its checkpoints on the event loop (every 250 WAL pages, inside a commit)
 * against the checkpoint thread (src/platform/db/sqlite/checkpointer.ts), with no
 * HTTP in front: batches of 25 deliveries (at most 16 MiB) appended back to back, one turn
 * of the event loop between them, `durability=full`, alternating round by
 * round. Reported per run: deliveries/s, the wall time of a commit as the
 * event loop sees it (p50, p99, p99.9, max), and the process's CPU per
 * delivery (both threads). BENCH_CKPT_BODY_BYTES (1024),
 * BENCH_CKPT_SECONDS (6), BENCH_CKPT_ROUNDS (3).
 */

const bodyBytes = Number(process.env.BENCH_CKPT_BODY_BYTES ?? '1024');
const seconds = Number(process.env.BENCH_CKPT_SECONDS ?? '6');
const rounds = Number(process.env.BENCH_CKPT_ROUNDS ?? '3');
const body = jsonBody(bodyBytes);
/** 25 deliveries, or fewer to stay within the write queue's 16 MiB of bodies per batch, as in the server. */
const BATCH = Math.max(1, Math.min(25, Math.floor((16 * 1024 * 1024) / body.length)));

async function run(thread: boolean): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'reception-checkpoints-'));
  const store = new SqliteStore({ file: join(dir, 'reception.sqlite'), durability: 'full', checkpointThread: thread });
  const commits: number[] = [];
  let stored = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const batch = Array.from({ length: BATCH }, () => storeDelivery(body));
    const at = performance.now();
    await store.append(batch);
    commits.push(performance.now() - at);
    stored += BATCH;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const elapsed = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const totals = store.checkpoints();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  commits.sort((a, b) => a - b);
  const at = (q: number): string => (commits[Math.min(commits.length - 1, Math.floor(q * commits.length))] ?? 0).toFixed(2);
  return (
    `| ${thread ? 'thread' : 'event loop'} | ${Math.round(stored / elapsed).toLocaleString('en')} | ${at(0.5)} | ${at(0.99)} | ` +
    `${at(0.999)} | ${at(1)} | ${((used.user + used.system) / stored).toFixed(1)} | ` +
    `${totals === undefined ? 'n/a' : `${totals.checkpoints} / ${totals.catchUps}`} |`
  );
}

console.log(`${bodyBytes}-byte JSON bodies, batches of ${BATCH}, ${seconds} s per run, durability=full\n`);
console.log(
  '| checkpoints | deliveries/s | commit p50 ms | p99 ms | p99.9 ms | max ms | CPU µs per delivery | checkpoints by the thread / catch-ups on the event loop |',
);
console.log('|---|--:|--:|--:|--:|--:|--:|--:|');
for (let round = 0; round < rounds; round++) {
  for (const thread of round % 2 === 0 ? [false, true] : [true, false]) console.log(await run(thread));
}
