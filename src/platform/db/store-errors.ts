// What every store says of its commits, whichever feature's tables it writes: how hard it syncs, and why a write failed.

/**
 * How hard the store syncs a commit before the delivery is acknowledged.
 * `full`: SQLite `synchronous=FULL`, the WAL is synced at every commit, so an
 * acknowledged delivery survives a power loss. `relaxed`: `synchronous=NORMAL`,
 * it survives a crash of the process (kill -9) but the last commits may be
 * lost on power loss or an OS crash.
 */
export type Durability = 'full' | 'relaxed';

/** The store could not take the write (disk full, locked, down): answer 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The store refused a batch for something in it, not for being unavailable:
 * a value it cannot hold, a clash with a stored row. The batch was rolled
 * back as a whole; its deliveries without the guilty one may commit (the
 * write queue retries them in halves, see write-queue.ts).
 */
export class BatchRefusedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BatchRefusedError';
  }
}
