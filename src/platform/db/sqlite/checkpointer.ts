import { Worker } from 'node:worker_threads';
import { DRIVER_PATH } from './driver.js';
import type { Durability } from '../store-errors.js';

/**
 * How long the checkpoint thread lets writes gather after the first one,
 * in ms: under a steady load it checkpoints about this often, each copy
 * holding this long's pages and ending in one sync of the database file.
 */
export const CHECKPOINT_PERIOD_MS = 50;

/**
 * WAL pages (of 4 KiB) past which the checkpoint thread asks the committing
 * connection to start the WAL over (see `restartWanted`). Bounds the WAL
 * near 8 MiB.
 */
export const RESTART_PAGES = 2048;

/**
 * The most WAL pages a copy by the thread may have written for it to ask
 * for the WAL to start over: the frames committed during such a copy are
 * few, and they are what the committing connection copies on the event
 * loop. After a longer copy the thread copies again at once, each copy
 * shorter than the one before while it copies faster than commits write.
 */
export const SETTLE_PAGES = 256;

/**
 * The committing connection's own `wal_autocheckpoint` while the thread
 * runs: a safety net above RESTART_PAGES and one of the write queue's
 * largest batches (16 MiB, 4,096 pages), so that it does not fire while the
 * thread keeps up, and bounds the WAL near 32 MiB if it cannot.
 */
export const FALLBACK_CHECKPOINT_PAGES = 8192;

/**
 * How long the thread waits for a write it is told of before it checks the
 * WAL anyway, in ms: writes other than appends and index steps (the outbox,
 * refusals, deletes) do not tell it.
 */
const IDLE_MS = 1000;

/** What the thread has done, as it last said. */
export interface CheckpointTotals {
  checkpoints: number;
  /** Times the thread asked the committing connection to start the WAL over. */
  restarts: number;
  /** WAL frames at its last checkpoint. */
  pages: number;
}

// Cells of the shared signal (checkpoint-worker.mjs reads the same).
const WRITES = 0;
const STOP = 1;
const RESTART = 2;

/**
 * SQLite's checkpoints on a thread of their own, off the event loop.
 *
 * A checkpoint copies the pages that commits appended to the WAL into the
 * database file and syncs that file. Left to SQLite (`wal_autocheckpoint`),
 * the commit that crosses the threshold does it, on the event loop, while
 * every request waits. Here a worker thread with its own connection does
 * it in `PASSIVE` mode, which never blocks the committing connection.
 *
 * A WAL starts over from its beginning only when a writer begins and every
 * frame in it has been copied. Under a steady load the thread's copy never
 * ends before the next commit, so the WAL would grow for as long as the
 * load lasts. Past RESTART_PAGES the thread copies until a copy is short
 * (SETTLE_PAGES), then raises a flag; the committing connection, before
 * its next commit, runs a passive checkpoint itself, which copies only the
 * frames committed since that short copy began (and syncs the database
 * file), and the commit after it starts the WAL over. A `RESTART` checkpoint in the thread would do the same while
 * holding the write lock, and the commit waiting for it sleeps in SQLite's
 * busy handler (1, 2, 5, 10 ms… at a time) for the whole copy: measured
 * at 40 to 80 ms at 1 KiB and up to a second at 1 MiB.
 * The durability of a commit does not change: a delivery is in the synced
 * WAL before its 200 (`durability=full`), whether or not it has been
 * copied yet.
 *
 * If the thread fails, the committing connection checkpoints on the event
 * loop again, as it did without the thread (`fallbackPages`).
 */
export class Checkpointer {
  private readonly signal = new Int32Array(new SharedArrayBuffer(12));
  private readonly worker: Worker;
  private readonly stopped: Promise<void>;
  private latest: CheckpointTotals = { checkpoints: 0, restarts: 0, pages: 0 };

  /**
   * @param onFailure called once if the thread ends on its own (an error
   *   opening or checkpointing): the store goes back to checkpointing itself.
   */
  constructor(file: string, durability: Durability, onFailure: (error: Error) => void) {
    this.worker = new Worker(new URL('./checkpoint-worker.mjs', import.meta.url), {
      workerData: {
        driver: DRIVER_PATH,
        file,
        synchronous: durability === 'full' ? 'FULL' : 'NORMAL',
        signal: this.signal.buffer,
        periodMs: CHECKPOINT_PERIOD_MS,
        restartPages: RESTART_PAGES,
        settlePages: SETTLE_PAGES,
        idleMs: IDLE_MS,
      },
    });
    // Never what keeps the process alive: the store's close() stops it.
    this.worker.unref();
    this.worker.on('message', (totals: CheckpointTotals) => {
      this.latest = totals;
    });
    let failure: Error | undefined;
    this.worker.once('error', (error: unknown) => {
      failure = asError(error);
    });
    this.stopped = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        if (Atomics.load(this.signal, STOP) === 0)
          onFailure(failure ?? new Error(`the checkpoint thread exited with code ${code}`));
        resolve();
      });
    });
  }

  /** Tells the thread that a write transaction committed: a few atomic operations, no message. */
  wrote(): void {
    Atomics.add(this.signal, WRITES, 1);
    Atomics.notify(this.signal, WRITES);
  }

  /**
   * True once after the thread asked for the WAL to start over: the
   * caller then checkpoints on its own connection before its next write.
   */
  restartWanted(): boolean {
    return Atomics.exchange(this.signal, RESTART, 0) === 1;
  }

  /** What the thread has done so far, as of its last checkpoint. */
  totals(): CheckpointTotals {
    return this.latest;
  }

  /** Stops the thread after the checkpoint it is running, if any, and closes its connection. */
  async stop(): Promise<void> {
    // Held alive until the thread has closed its connection: unreferenced, a process with
    // nothing else to do would exit here, before the store's own close.
    this.worker.ref();
    Atomics.store(this.signal, STOP, 1);
    Atomics.notify(this.signal, WRITES);
    Atomics.notify(this.signal, STOP);
    await this.stopped;
  }
}

/**
 * An error thrown in the thread as an Error: what is not one of the
 * built-in errors (better-sqlite3's SqliteError) reaches this thread as a
 * plain object with its fields.
 */
function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  const { message, code } = (thrown ?? {}) as { message?: unknown; code?: unknown };
  const text = typeof message === 'string' ? message : String(thrown);
  return new Error(typeof code === 'string' ? `${code}: ${text}` : text);
}
