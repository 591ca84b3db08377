// @ts-check
// The checkpoint thread of a SQLite inbox (see checkpointer.ts): plain
// JavaScript, so that the same file runs under the compiled server and under
// Vitest, whose TypeScript a worker thread cannot load.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * @type {{ driver: string, file: string, synchronous: 'FULL' | 'NORMAL', signal: SharedArrayBuffer,
 *          periodMs: number, restartPages: number, settlePages: number, idleMs: number }}
 */
const options = workerData;
/** @type {typeof import('better-sqlite3')} */
const Database = createRequire(import.meta.url)(options.driver);
// Cells of the shared signal: writes since the start (the committing thread adds one per
// write transaction and wakes this thread), the stop flag, and the restart wanted.
const WRITES = 0;
const STOP = 1;
const RESTART = 2;
const signal = new Int32Array(options.signal);
const db = new Database(options.file);
// The same level as the committing connection: with NORMAL a checkpoint syncs the WAL
// before copying it; with both, it syncs the database file after.
db.pragma(`synchronous = ${options.synchronous}`);
/** @param {string} mode */
const checkpoint = (mode) => {
  const row = /** @type {{ busy: number, log: number, checkpointed: number }} */ (db.pragma(`wal_checkpoint(${mode})`)[0]);
  return row;
};
const totals = { checkpoints: 0, restarts: 0, pages: 0 };
try {
  let seen = Atomics.load(signal, WRITES);
  let last = { log: 0, checkpointed: 0 };
  let chasing = false;
  while (Atomics.load(signal, STOP) === 0) {
    // Wait for a write, then let a period's writes gather before copying them; while
    // chasing a WAL that is to start over, copy again at once.
    if (!chasing) {
      if (Atomics.load(signal, WRITES) === seen) Atomics.wait(signal, WRITES, seen, options.idleMs);
      if (Atomics.load(signal, STOP) !== 0) break;
      Atomics.wait(signal, STOP, 0, options.periodMs);
      if (Atomics.load(signal, STOP) !== 0) break;
    }
    seen = Atomics.load(signal, WRITES);
    // PASSIVE copies what the WAL holds without taking the write lock: the committing
    // thread goes on meanwhile. Writes that come in while it copies stay for the next.
    const passive = checkpoint('PASSIVE');
    // Frames this copy wrote: `checkpointed` counts from the WAL's start, which moved back if it started over.
    const copied = passive.log < last.log ? passive.checkpointed : passive.checkpointed - last.checkpointed;
    last = passive;
    chasing = false;
    // Nothing new since the last one (a wake-up with nothing written): nothing to say.
    if (copied === 0 && passive.checkpointed === passive.log) continue;
    totals.checkpoints++;
    totals.pages = passive.log;
    // Under a steady load a passive checkpoint seldom ends with every frame copied, and
    // only then may the next writer start the WAL over. Past restartPages, the committing
    // thread is asked to copy the few frames committed since this copy began, itself,
    // before its next commit, which then starts the WAL over (see checkpointer.ts). A
    // RESTART here would take the write lock and make a commit sleep in SQLite's busy
    // handler for the whole copy and sync: measured 40 to 80 ms at 1 KiB, a second at 1 MiB.
    // It asks only once a copy was short (settlePages), so that the frames committed during
    // it, which the committing thread copies, are few; until then it copies again at once.
    if (passive.log >= options.restartPages) {
      if (copied <= options.settlePages) {
        Atomics.store(signal, RESTART, 1);
        totals.restarts++;
      } else chasing = true;
    }
    parentPort?.postMessage(totals);
  }
} finally {
  db.close();
}
