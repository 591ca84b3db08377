import { Worker } from 'node:worker_threads';
import { DRIVER_PATH } from './driver.js';
import type { Durability } from '../inbox-store.js';

/**
 * How long the checkpoint thread lets writes gather after the first one,
 * in ms: under a steady load it checkpoints about this often, each copy
 * holding this long's pages and ending in one sync of the database file.
 */
export const CHECKPOINT_PERIOD_MS = 50;

/**
 * WAL pages (of 4 KiB) past which the checkpoint thread also restarts the
 * WAL (`wal_checkpoint(RESTART)`), taking the write lock for the frames
 * that came in during its passive copy. Bounds the WAL near 8 MiB.
 */
export const RESTART_PAGES = 2048;

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
  restarts: number;
  /** WAL frames at its last checkpoint. */
  pages: number;
}

// Cells of the shared signal (checkpoint-worker.mjs reads the same).
const WRITES = 0;
const STOP = 1;

/**
 * SQLite's checkpoints on a thread of their own, off the event loop.
 *
 * A checkpoint copies the pages that commits appended to the WAL into the
 * database file and syncs that file. Left to SQLite (`wal_autocheckpoint`),
 * the commit that crosses the threshold does it, on the event loop, while
 * every request waits. Here a worker thread with its own connection does
 * it in `PASSIVE` mode, which never blocks the committing connection, and
 * now and then `RESTART`, so that the WAL stays bounded (see RESTART_PAGES).
 * The durability of a commit does not change: a delivery is in the synced
 * WAL before its 200 (`durability=full`), whether or not it has been
 * copied yet.
 *
 * If the thread fails, the committing connection checkpoints on the event
 * loop again, as it did without the thread (`fallbackPages`).
 */
export class Checkpointer {
  private readonly signal = new Int32Array(new SharedArrayBuffer(8));
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
