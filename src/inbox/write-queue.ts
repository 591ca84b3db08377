import { type AppendOutcome, type InboxStore, type NewDelivery } from '../deliveries/delivery-store.js';
import { BatchRefusedError, StoreUnavailableError } from '../platform/db/store-errors.js';

export interface WriteQueueOptions {
  /** Deliveries waiting for a commit, at most; past it `enqueue` refuses. */
  maxPending: number;
  /** Body bytes waiting for a commit, at most. */
  maxPendingBytes: number;
  /** Deliveries per transaction, at most. */
  maxBatch: number;
  /**
   * Body bytes per transaction, at most, save that a transaction always
   * takes at least one delivery, however large. A commit runs on the event
   * loop (better-sqlite3 is synchronous), so this bounds how long it holds
   * every other request up.
   */
  maxBatchBytes: number;
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
 * that transaction committed (or failed). One delivery that the store
 * refuses fails alone, not its batch (see `commit`). The queue is bounded:
 * when it is full, `enqueue` refuses at once so that the sender can be told
 * to retry.
 */
export class WriteQueue {
  private pending: Pending[] = [];
  private pendingBytes = 0;
  /** Deliveries in the commit running now. */
  private committing = 0;
  private flushing = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private commitCount = 0;

  constructor(
    /** The store, or what commits through it (app.ts: the forwarder, which leases forwards at the commit). */
    private readonly store: Pick<InboxStore, 'append'>,
    private readonly options: WriteQueueOptions,
  ) {}

  /** Deliveries not yet answered: waiting for a commit, or inside the one running now. */
  get depth(): number {
    return this.pending.length + this.committing;
  }

  enqueue(delivery: NewDelivery): Promise<AppendOutcome> {
    if (
      this.pending.length >= this.options.maxPending ||
      this.pendingBytes + delivery.raw.length > this.options.maxPendingBytes
    ) {
      return Promise.reject(new StoreUnavailableError('The write queue is full.'));
    }
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.pending.push({ delivery, resolve, reject });
      this.pendingBytes += delivery.raw.length;
      this.schedule();
    });
  }

  /** Transactions run so far (committed or not): a change says that deliveries are coming in. */
  get commits(): number {
    return this.commitCount;
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
    const batch = this.pending.splice(0, this.batchLength());
    this.committing = batch.length;
    let settled: ReadonlyArray<AppendOutcome | Error> = [];
    try {
      settled = await this.commit(batch.map((item) => item.delivery));
    } finally {
      for (const item of batch) this.pendingBytes -= item.delivery.raw.length;
      this.committing = 0;
      this.flushing = false;
      batch.forEach((item, index) => {
        const result = settled[index] ?? new StoreUnavailableError('The store returned too few outcomes.');
        if (result instanceof Error) item.reject(result);
        else item.resolve(result);
      });
      if (this.pending.length > 0) this.schedule();
      else this.wakeIdleWaiters();
    }
  }

  /** How many of the pending deliveries the next transaction takes: maxBatch, or fewer to stay within maxBatchBytes. */
  private batchLength(): number {
    const most = Math.min(this.pending.length, this.options.maxBatch);
    let bytes = 0;
    for (let count = 0; count < most; count++) {
      bytes += this.pending[count]?.delivery.raw.length ?? 0;
      if (bytes > this.options.maxBatchBytes) return Math.max(1, count);
    }
    return most;
  }

  /**
   * Commits `batch`: its outcomes, or for each delivery the error that kept
   * it out. When the store refuses the batch for something in it
   * (`BatchRefusedError`: a value it cannot hold), each half is committed
   * on its own, and so on down, so that only the guilty delivery fails and
   * the others are stored: about 2·log2(n) more commits for one such
   * delivery among n, and nothing more when nothing fails. A store that is
   * unavailable (down, full, locked) fails the whole batch at once, and
   * the halves not tried yet with it: retrying parts against it would only
   * multiply the wait.
   */
  private async commit(batch: readonly NewDelivery[]): Promise<ReadonlyArray<AppendOutcome | Error>> {
    const started = process.hrtime.bigint();
    try {
      const outcomes = await this.store.append(batch);
      this.report(batch.length, started, true);
      return outcomes;
    } catch (error) {
      this.report(batch.length, started, false);
      const reason = error instanceof Error ? error : new StoreUnavailableError(String(error));
      if (!(reason instanceof BatchRefusedError) || batch.length === 1) return batch.map(() => reason);
      const middle = Math.ceil(batch.length / 2);
      const first = await this.commit(batch.slice(0, middle));
      const unavailable = first.find(
        (result): result is Error => result instanceof Error && !(result instanceof BatchRefusedError),
      );
      const second =
        unavailable === undefined ? await this.commit(batch.slice(middle)) : batch.slice(middle).map(() => unavailable);
      return [...first, ...second];
    }
  }

  private report(batchSize: number, started: bigint, ok: boolean): void {
    this.commitCount++;
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
