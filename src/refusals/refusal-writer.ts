import { StoreUnavailableError } from '../platform/db/store-errors.js';
import type { NewRefusal, RefusalBounds, RefusalStore } from './refusals.js';
import { bucketStart, type TrafficIncrement, type TrafficStore } from '../traffic/traffic.js';
import { MINUTE_MS } from '../platform/config/duration.js';

/** What the writer logs with (the app's pino logger fits); named here so that store/ imports nothing of observe/. */
export interface RefusalWriterLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Why refusals were not kept: the buffer was full, the store refused the batch, or the process stopped first. */
export type DropReason = 'buffer_full' | 'refused' | 'shutdown';

export interface RefusalWriterOptions {
  store: RefusalStore;
  bounds: RefusalBounds;
  log: RefusalWriterLog;
  /** Where every refusal is counted per source and minute, those dropped included; none when absent. */
  traffic?: TrafficStore;
  /** Refusals waiting to be written, at most (default 1000); past it, new ones are dropped and counted. */
  maxBuffered?: number;
  /** Their bytes (previews, headers, details), at most (default 8 MiB). */
  maxBufferedBytes?: number;
  /** Refusals per transaction, at most (default 100). */
  maxBatch?: number;
  /** Their bytes per transaction, at most (default 1 MiB), save that one always goes. */
  maxBatchBytes?: number;
  /** Time between writes, in ms (default 500). */
  intervalMs?: number;
  /** The first wait after the store could not take a batch, doubling up to 30 s (default 1000). */
  retryMs?: number;
  /** Told of every batch committed. */
  onKept?: (batch: readonly NewRefusal[]) => void;
  /** Told of refusals that will never be written. */
  onDropped?: (count: number, reason: DropReason) => void;
}

const MAX_RETRY_MS = 30_000;
/**
 * Source-minutes of refusal counts held between writes, at most: a flood to
 * ever new source names (refused for their names, say) stops being counted
 * per source past it rather than growing the map without end.
 */
const MAX_TALLY = 10_000;
/**
 * With 100 a batch: at most 200 refusals a second are written, whatever comes; the rest are dropped, counted.
 * At 400 a second, a flood's refusals on SQLite made the deliveries' p99 beside it a third longer than with none
 * kept (their WAL pages bring the checkpoints, and their fsyncs, on the event loop sooner); at 200, no longer
 * than with none kept (bench/RESULTS.md at commit 2d24709, "A flood of refused requests").
 */
const DEFAULT_INTERVAL_MS = 500;

interface Held {
  refusal: NewRefusal;
  bytes: number;
}

/**
 * Keeps refusals off the path of deliveries (CONTRACT 9). `record` only
 * puts a refusal in a bounded buffer, in memory, and never waits; a timer
 * writes the buffer a batch at a time, each in a transaction of its own,
 * never in the write queue's: a delivery's commit never carries a refusal
 * or waits for one. At most `maxBatch` refusals go every `intervalMs`, so
 * a flood of bad requests costs the store (and, on SQLite, the event loop)
 * a bounded share of its time; what the buffer cannot hold is dropped and
 * counted, and the store's bounds hold whatever arrives.
 *
 * When the store cannot take a batch (down, locked), the batch stays at the
 * front of the buffer and is tried again after a wait that doubles up to
 * 30 s; meanwhile new refusals fill the buffer up to its bound. A batch
 * that the store refuses for what it holds is dropped, not tried forever.
 */
export class RefusalWriter {
  private readonly buffer: Held[] = [];
  private bufferedBytes = 0;
  /** The timer's next write, or its write in progress: at most one. */
  private timer: NodeJS.Timeout | undefined;
  private timerWriting = false;
  /** Writes run one after the other (the timer's and `flush`'s), never two at once. */
  private chain: Promise<unknown> = Promise.resolve();
  private failing = false;
  /** The wait before the next try after a failure, doubling; and the one in force now. */
  private retryMs: number;
  private waitMs = 0;
  private stopped = false;
  /** Refusals counted and not yet written to the traffic counts, per source and minute. */
  private tally = new Map<string, TrafficIncrement>();

  constructor(private readonly options: RefusalWriterOptions) {
    this.retryMs = options.retryMs ?? 1000;
  }

  /** Refusals waiting to be written. */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Whether `record` would take one more refusal now (as far as their number goes). */
  hasRoom(): boolean {
    return !this.stopped && this.buffer.length < (this.options.maxBuffered ?? 1000);
  }

  /** Counts a refusal dropped before it was recorded (`hasRoom` said no); its source's traffic counts it still. */
  drop(source: string | null, at: number): void {
    this.count(source, at);
    this.options.onDropped?.(1, this.stopped ? 'shutdown' : 'buffer_full');
  }

  /** Takes a refusal to be written soon; drops it (counted) when the buffer is full or the writer stopped. */
  record(refusal: NewRefusal): void {
    this.count(refusal.source, refusal.receivedAt);
    const bytes = sizeOf(refusal);
    if (
      this.stopped ||
      this.buffer.length >= (this.options.maxBuffered ?? 1000) ||
      this.bufferedBytes + bytes > (this.options.maxBufferedBytes ?? 8 * 1024 * 1024)
    ) {
      this.options.onDropped?.(1, this.stopped ? 'shutdown' : 'buffer_full');
      return;
    }
    this.buffer.push({ refusal, bytes });
    this.bufferedBytes += bytes;
    if (this.timer === undefined && !this.timerWriting) this.schedule(this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
  }

  /** Writes everything buffered now, batch by batch; resolves when done or when the store could not take a batch. */
  async flush(): Promise<void> {
    while (this.buffer.length > 0) {
      if (!(await this.writeNext())) return;
    }
    if (this.tally.size > 0) await this.writeNext();
  }

  /** One refusal more in its source's traffic counts (a name that was not valid has no traffic to show). */
  private count(source: string | null, at: number): void {
    if (source === null || this.options.traffic === undefined) return;
    const minute = bucketStart(at, MINUTE_MS);
    const key = `${minute}\u0000${source}`;
    const held = this.tally.get(key);
    if (held !== undefined) held.refused++;
    else if (this.tally.size < MAX_TALLY) this.tally.set(key, { source, at: minute, refused: 1 });
    if (this.timer === undefined && !this.timerWriting) this.schedule(this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
  }

  /** Writes the refusal counts held; when the store cannot take them now, they wait for the next write. */
  private async writeTally(): Promise<void> {
    const traffic = this.options.traffic;
    if (this.tally.size === 0 || traffic === undefined) return;
    const held = this.tally;
    this.tally = new Map();
    try {
      await traffic.addRefused([...held.values()]);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) {
        this.options.log.warn({ err: error }, 'the store refused refusal counts; they are dropped');
        return;
      }
      for (const [key, inc] of held) {
        const now = this.tally.get(key);
        if (now !== undefined) now.refused += inc.refused;
        else this.tally.set(key, inc);
      }
    }
  }

  /** Stops the timer, writes what is buffered (one try), and drops, counted, what the store would not take. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    await this.chain;
    if (this.buffer.length > 0) {
      this.options.onDropped?.(this.buffer.length, 'shutdown');
      this.buffer.length = 0;
      this.bufferedBytes = 0;
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerWriting = true;
      void this.writeNext().then((ok) => {
        this.timerWriting = false;
        if ((this.buffer.length > 0 || this.tally.size > 0) && this.timer === undefined) {
          this.schedule(ok ? (this.options.intervalMs ?? DEFAULT_INTERVAL_MS) : this.waitMs);
        }
      });
    }, ms);
    this.timer.unref();
  }

  /** The next batch's write, after any write in progress. */
  private writeNext(): Promise<boolean> {
    const next = this.chain.then(() => this.writeBatch());
    this.chain = next;
    return next;
  }

  /** Writes the batch at the front of the buffer; false when the store could not take it (it stays buffered). */
  private async writeBatch(): Promise<boolean> {
    const count = this.batchLength();
    if (count === 0) {
      await this.writeTally();
      return true;
    }
    const batch = this.buffer.slice(0, count).map((held) => held.refusal);
    try {
      await this.options.store.add(batch, this.options.bounds);
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        if (!this.failing) {
          this.options.log.warn(
            { err: error, buffered: this.buffer.length },
            'refusals could not be written; they wait in memory and are tried again',
          );
        }
        this.failing = true;
        this.waitMs = this.retryMs;
        this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
        return false;
      }
      this.options.log.warn({ err: error, count }, 'the store refused a batch of refusals; they are dropped');
      this.take(count);
      this.options.onDropped?.(count, 'refused');
      return true;
    }
    this.take(count);
    await this.writeTally();
    if (this.failing) this.options.log.info({ buffered: this.buffer.length }, 'refusals are written again');
    this.failing = false;
    this.retryMs = this.options.retryMs ?? 1000;
    this.options.onKept?.(batch);
    return true;
  }

  private take(count: number): void {
    for (const held of this.buffer.splice(0, count)) this.bufferedBytes -= held.bytes;
  }

  /** How many of the buffered refusals the next transaction takes: maxBatch, or fewer to stay within maxBatchBytes. */
  private batchLength(): number {
    const most = Math.min(this.buffer.length, this.options.maxBatch ?? 100);
    const maxBytes = this.options.maxBatchBytes ?? 1024 * 1024;
    let bytes = 0;
    for (let count = 0; count < most; count++) {
      bytes += this.buffer[count]?.bytes ?? 0;
      if (bytes > maxBytes) return Math.max(1, count);
    }
    return most;
  }
}

/** About the memory a refusal holds: its preview, headers and texts. */
function sizeOf(refusal: NewRefusal): number {
  let bytes = 256 + refusal.preview.length + refusal.detail.length + refusal.contentType.length + (refusal.source?.length ?? 0);
  for (const [name, value] of refusal.headers) bytes += name.length + value.length + 16;
  return bytes;
}
