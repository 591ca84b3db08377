import { StoreUnavailableError, type AppendOutcome, type InboxStore, type NewDelivery } from './inbox-store.js';

export interface WriteQueueOptions {
  /** Deliveries waiting for a commit, at most; past it `enqueue` refuses. */
  maxPending: number;
  /** Body bytes waiting for a commit, at most. */
  maxPendingBytes: number;
  /** Deliveries per transaction, at most. */
  maxBatch: number;
  /** Told about every commit, for the metrics. */
  onCommit?: (batchSize: number, seconds: number, ok: boolean) => void;
}

interface Pending {
  delivery: NewDelivery;
  resolve: (outcome: AppendOutcome) => void;
  reject: (error: Error) => void;
}

/**
 * Group commit. Deliveries that arrive while a commit is being prepared or
 * is running share the next transaction; each promise settles only after
 * that transaction committed (or failed). The queue is bounded: when it is
 * full, `enqueue` refuses at once so that the sender can be told to retry.
 */
export class WriteQueue {
  private pending: Pending[] = [];
  private pendingBytes = 0;
  /** Deliveries in the commit running now. */
  private committing = 0;
  private flushing = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly store: InboxStore,
    private readonly options: WriteQueueOptions,
  ) {}

  /** Deliveries not yet answered: waiting for a commit, or inside the one running now. */
  get depth(): number {
    return this.pending.length + this.committing;
  }

  enqueue(delivery: NewDelivery): Promise<AppendOutcome> {
    if (this.pending.length >= this.options.maxPending
      || this.pendingBytes + delivery.raw.length > this.options.maxPendingBytes) {
      return Promise.reject(new StoreUnavailableError('The write queue is full.'));
    }
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.pending.push({ delivery, resolve, reject });
      this.pendingBytes += delivery.raw.length;
      this.schedule();
    });
  }

  /** Resolves once every delivery enqueued so far has been committed or refused. */
  drain(): Promise<void> {
    if (this.pending.length === 0 && !this.flushing) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    // setImmediate runs after the I/O callbacks of this loop turn, so every
    // body that completed in the same turn joins the same transaction.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const batch = this.pending.splice(0, this.options.maxBatch);
    this.committing = batch.length;
    const started = process.hrtime.bigint();
    try {
      const outcomes = await this.store.append(batch.map((item) => item.delivery));
      this.report(batch.length, started, true);
      batch.forEach((item, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) item.reject(new StoreUnavailableError('The store returned too few outcomes.'));
        else item.resolve(outcome);
      });
    } catch (error) {
      this.report(batch.length, started, false);
      const reason = error instanceof Error ? error : new StoreUnavailableError(String(error));
      for (const item of batch) item.reject(reason);
    } finally {
      for (const item of batch) this.pendingBytes -= item.delivery.raw.length;
      this.committing = 0;
      this.flushing = false;
      if (this.pending.length > 0) this.schedule();
      else this.wakeIdleWaiters();
    }
  }

  private report(batchSize: number, started: bigint, ok: boolean): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    try {
      this.options.onCommit?.(batchSize, seconds, ok);
    } catch {
      // A listener's failure must not turn a commit into a refusal, nor leave
      // the batch's promises unsettled: the commit's outcome is what counts.
    }
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
