import type { InboxStore } from './inbox-store.js';

/**
 * What the pruner logs and counts with: the app's pino logger and its
 * Metrics fit these shapes. Named here, not imported from `observe/`,
 * because `observe/` already imports the store's types: the folders stay
 * out of a circle.
 */
export interface PrunerLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}
export interface PrunerMetrics {
  /** reception_retention_pruned_total */
  pruned: { inc(count: number): void };
}

export interface PrunerOptions {
  store: InboxStore;
  retentionMs: number;
  logger: PrunerLog;
  metrics: PrunerMetrics;
  /** Deliveries deleted per transaction. */
  batchSize?: number;
  /** Time between rounds, in ms. */
  intervalMs?: number;
}

/**
 * Deletes deliveries older than the retention in small transactions, giving
 * the event loop back between them so that receiving never waits long.
 */
export class RetentionPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(private readonly options: PrunerOptions) {}

  start(): void {
    const interval = this.options.intervalMs ?? 60_000;
    const tick = (): void => {
      this.running = this.pruneOnce().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, interval).unref();
      });
    };
    this.timer = setTimeout(tick, 1000).unref();
  }

  /** One round: deletes every delivery past the retention, batch by batch. */
  async pruneOnce(): Promise<number> {
    const { store, retentionMs, logger, metrics } = this.options;
    const batchSize = this.options.batchSize ?? 500;
    const cutoff = Date.now() - retentionMs;
    let total = 0;
    try {
      for (;;) {
        if (this.stopped) break;
        const deleted = await store.pruneOlderThan(cutoff, batchSize);
        total += deleted;
        metrics.pruned.inc(deleted);
        if (deleted < batchSize) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      logger.warn({ err: error }, 'retention pruning failed; it will be tried again');
    }
    if (total > 0) logger.info({ deleted: total, olderThan: new Date(cutoff).toISOString() }, 'retention pruned deliveries');
    return total;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }
}
