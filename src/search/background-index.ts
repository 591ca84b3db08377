import { performance } from 'node:perf_hooks';
import type { DeriveEventType, IndexBudget, InboxStore } from '../deliveries/delivery-store.js';

/** What the indexer logs with (the app's pino logger fits; see retention-pruner.ts for why it is not imported). */
export interface IndexerLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface BackgroundIndexOptions {
  store: InboxStore;
  derive: DeriveEventType;
  logger: IndexerLog;
  /**
   * True when deliveries are coming in (the write queue committed since the
   * last ask, or holds some): then the indexer takes turns with them.
   */
  busy: () => boolean;
  /** Time per step, in ms (each step is one transaction). */
  stepMs?: number;
  /** Rows a step reads at most. */
  stepRows?: number;
  /** The share of the time the indexer takes while deliveries are coming in (0 to 1). */
  busyShare?: number;
  /** How often it looks for work when nothing woke it, in ms. */
  pollMs?: number;
}

/**
 * The share of the time the index takes while deliveries are coming in.
 * Measured with bench/compare-builds.sh (bench/RESULTS.md at commit 2d24709, "A large inbox"):
 * at a tenth, 1 KiB ingest ran at 0.68 to 0.76 of the build before the
 * index; at a fiftieth, 0.83; with no index work at all, 0.88 to 0.90. The
 * price is the lag of search under a flood, made up once it stops.
 */
export const BUSY_SHARE = 0.02;

/**
 * The work behind the commits (InboxStore.indexStep): the search index of
 * new deliveries on SQLite, and the one-time fill of the event types and
 * search text of deliveries stored before they existed. Runs in steps of
 * about `stepMs` (10 ms), each a short transaction, so that receiving
 * never waits long: while deliveries are coming in, it pauses 49 times
 * as long as each step took (it takes a fiftieth of the time, `busyShare`),
 * so that it does not slow receiving down by more; when they are not, it
 * goes on at once until it is done, then waits for the next commit
 * (`wake`) or `pollMs`.
 */
export class BackgroundIndex {
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Ends the pause in progress: a wake ends an idle wait, a stop ends any. */
  private endPause: ((byWake: boolean) => void) | undefined;
  private woken = false;
  private idleWaiters: Array<() => void> = [];
  private idle = false;

  constructor(private readonly options: BackgroundIndexOptions) {}

  start(): void {
    this.running ??= this.loop();
  }

  /** Something was committed: look for work now. */
  wake(): void {
    this.woken = true;
    this.idle = false;
    this.endPause?.(true);
  }

  /** Resolves once the indexer has found nothing left to do since the last wake (for tests and the bench). */
  caughtUp(): Promise<void> {
    if (this.idle || this.running === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.endPause?.(false);
    await this.running;
    this.wakeIdleWaiters();
  }

  private async loop(): Promise<void> {
    const { store, derive, logger } = this.options;
    const budget: IndexBudget = { maxMs: this.options.stepMs ?? 10, maxRows: this.options.stepRows ?? 500 };
    const share = this.options.busyShare ?? BUSY_SHARE;
    let failures = 0;
    while (!this.stopped) {
      this.woken = false;
      const started = performance.now();
      let more: boolean;
      try {
        more = (await store.indexStep(budget, derive)).more;
        failures = 0;
      } catch (error) {
        // A store that is down or busy: try again later, a little later each time.
        failures++;
        if (failures === 1 || failures % 100 === 0)
          logger.warn({ err: error, failures }, 'search indexing failed; it will be tried again');
        await this.pause(Math.min(30_000, 100 * 2 ** Math.min(failures, 8)), false);
        continue;
      }
      if (!more) {
        if (this.woken) continue;
        this.idle = true;
        this.wakeIdleWaiters();
        await this.pause(this.options.pollMs ?? 5_000, true);
        continue;
      }
      const spent = performance.now() - started;
      // Commits wake it all the time under load: this pause ends only by its clock (or a stop).
      if (this.options.busy()) await this.pause((spent * (1 - share)) / share, false);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Waits `ms`, or less when stopped, or woken if `wakeable`. */
  private pause(ms: number, wakeable: boolean): Promise<void> {
    // A stop that came while a step ran found no pause to end: none is begun.
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const end = (): void => {
        clearTimeout(timer);
        this.endPause = undefined;
        resolve();
      };
      const timer = setTimeout(end, ms);
      timer.unref();
      this.endPause = (byWake) => {
        if (!byWake || wakeable) end();
      };
    });
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
