import type { InboxDatabase } from './inbox-database.js';
import { TRAFFIC_KEEP_MS } from '../traffic/traffic.js';

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
  /** reception_refusals_pruned_total */
  refusalsPruned?: { inc(count: number): void };
}

export interface PrunerOptions {
  store: InboxDatabase;
  /** Deliveries older than this (ms) are deleted; none when absent (RECEPTION_RETENTION unset). */
  retentionMs?: number;
  /** Refusals older than this (ms) are deleted; none when absent (RECEPTION_REFUSALS_RETENTION). */
  refusalRetentionMs?: number;
  logger: PrunerLog;
  metrics: PrunerMetrics;
  /** Traffic counts older than this (ms) are deleted (TRAFFIC_KEEP_MS, 48 hours, when absent). */
  trafficRetentionMs?: number;
  /** Deliveries deleted per transaction. */
  batchSize?: number;
  /** Time between rounds, in ms. */
  intervalMs?: number;
}

/**
 * Deletes deliveries, and refusals, older than their retention in small
 * transactions, giving the event loop back between them so that receiving
 * never waits long.
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

  /**
   * One round: deletes every delivery, every refusal and every minute of
   * traffic counts past its retention, batch by batch; answers how many deliveries.
   */
  async pruneOnce(): Promise<number> {
    const { store, retentionMs, refusalRetentionMs, metrics } = this.options;
    const refusals = metrics.refusalsPruned;
    await this.prune(
      'traffic counts',
      this.options.trafficRetentionMs ?? TRAFFIC_KEEP_MS,
      (before, limit) => store.traffic.pruneOlderThan(before, limit),
      () => undefined,
      false,
    );
    if (refusalRetentionMs !== undefined) {
      await this.prune(
        'refusals',
        refusalRetentionMs,
        (before, limit) => store.refusals.pruneOlderThan(before, limit),
        (n) => refusals?.inc(n),
      );
    }
    if (retentionMs === undefined) return 0;
    return this.prune(
      'deliveries',
      retentionMs,
      (before, limit) => store.pruneOlderThan(before, limit),
      (n) => metrics.pruned.inc(n),
    );
  }

  private async prune(
    what: string,
    retentionMs: number,
    pruneOlderThan: (before: number, limit: number) => Promise<number>,
    count: (deleted: number) => void,
    /** Whether a round that deleted some says so (traffic minutes expire every minute: not worth a line). */
    logged = true,
  ): Promise<number> {
    const { logger } = this.options;
    const batchSize = this.options.batchSize ?? 500;
    const cutoff = Date.now() - retentionMs;
    let total = 0;
    try {
      for (;;) {
        if (this.stopped) break;
        const deleted = await pruneOlderThan(cutoff, batchSize);
        total += deleted;
        count(deleted);
        if (deleted < batchSize) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      logger.warn({ err: error, what }, 'retention pruning failed; it will be tried again');
    }
    if (total > 0 && logged)
      logger.info({ deleted: total, olderThan: new Date(cutoff).toISOString() }, `retention pruned ${what}`);
    return total;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }
}
