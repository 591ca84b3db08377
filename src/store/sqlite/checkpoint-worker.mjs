// @ts-check
// The checkpoint thread of a SQLite inbox (see checkpointer.ts): plain
// JavaScript, so that the same file runs under the compiled server and under
// Vitest, whose TypeScript a worker thread cannot load.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * @type {{ driver: string, file: string, synchronous: 'FULL' | 'NORMAL', signal: SharedArrayBuffer,
 *          periodMs: number, restartPages: number, idleMs: number }}
 */
const options = workerData;
/** @type {typeof import('better-sqlite3')} */
const Database = createRequire(import.meta.url)(options.driver);
// Cells of the shared signal: writes since the start (the committing thread adds one per
// write transaction and wakes this thread), and the stop flag.
const WRITES = 0;
const STOP = 1;
const signal = new Int32Array(options.signal);
const db = new Database(options.file);
// The same level as the committing connection: with NORMAL a checkpoint syncs the WAL
// before copying it; with both, it syncs the database file after.
db.pragma(`synchronous = ${options.synchronous}`);
// How long a RESTART waits for the committing connection's transaction and for readers.
db.pragma('busy_timeout = 200');
/** @param {string} mode */
const checkpoint = (mode) => {
  const row = /** @type {{ busy: number, log: number, checkpointed: number }} */ (db.pragma(`wal_checkpoint(${mode})`)[0]);
  return row;
};
const totals = { checkpoints: 0, restarts: 0, pages: 0 };
try {
  let seen = Atomics.load(signal, WRITES);
  while (Atomics.load(signal, STOP) === 0) {
    // Wait for a write, then let a period's writes gather before copying them.
    if (Atomics.load(signal, WRITES) === seen) Atomics.wait(signal, WRITES, seen, options.idleMs);
    if (Atomics.load(signal, STOP) !== 0) break;
    Atomics.wait(signal, STOP, 0, options.periodMs);
    if (Atomics.load(signal, STOP) !== 0) break;
    seen = Atomics.load(signal, WRITES);
    // PASSIVE copies what the WAL holds without taking the write lock: the committing
    // thread goes on meanwhile. Writes that come in while it copies stay for the next.
    const passive = checkpoint('PASSIVE');
    // Nothing new since the last one (a wake-up with nothing written): nothing to say.
    if (passive.log === totals.pages && passive.checkpointed === passive.log) continue;
    totals.checkpoints++;
    totals.pages = passive.log;
    // Under a steady load a passive checkpoint seldom ends with every frame copied, and
    // only then may the next writer start the WAL over. Past restartPages, RESTART takes
    // the write lock for the few frames left, so that the WAL stays bounded.
    if (passive.log >= options.restartPages) {
      const restart = checkpoint('RESTART');
      if (restart.busy === 0) totals.restarts++;
    }
    parentPort?.postMessage(totals);
  }
} finally {
  db.close();
}
