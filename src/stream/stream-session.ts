import type { Writable } from 'node:stream';
import type { InboxStore, StoredDelivery } from '../store/inbox-store.js';
import type { CommitFeed } from './commit-feed.js';

export interface StreamSessionOptions {
  store: InboxStore;
  feed: CommitFeed;
  /** Sends deliveries whose seq is greater than this. */
  afterSeq: number;
  source?: string;
  /** Turns a delivery into the `data:` JSON. */
  render: (delivery: StoredDelivery) => string;
  /** Bytes the client may leave unread before it is disconnected. */
  maxBufferedBytes: number;
  heartbeatMs: number;
  /** Deliveries read from the store at a time. */
  batchSize?: number;
  onEnd?: (reason: StreamEndReason) => void;
}

export type StreamEndReason = 'client_closed' | 'slow_reader' | 'server_closing' | 'store_error';

/**
 * One Server-Sent Events client. It reads from the store after its own
 * position (the last `id` it sent) whenever the feed says the inbox grew,
 * so catch-up and live events are one loop: no gap, no repeat. A reader
 * that leaves more than `maxBufferedBytes` unread is disconnected, and what
 * it left unread is dropped with the connection; it can resume with
 * `Last-Event-ID` (a client never takes an event it did not get whole).
 * So a client holds at most that much, or one event while it still reads.
 */
export class StreamSession {
  private position: number;
  private pumping = false;
  private wokenWhilePumping = false;
  private ended = false;
  private readonly unsubscribe: () => void;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly out: Writable, private readonly options: StreamSessionOptions) {
    this.position = options.afterSeq;
    this.unsubscribe = options.feed.subscribe(() => this.wake());
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), options.heartbeatMs);
    out.once('close', () => this.end('client_closed'));
    out.on('drain', () => this.wake());
    this.write('retry: 1000\n: connected\n\n');
    this.wake();
  }

  /** The seq of the last delivery sent. */
  get lastSentSeq(): number {
    return this.position;
  }

  end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    this.unsubscribe();
    clearInterval(this.heartbeat);
    // A reader too slow to take what it was sent would hold it, on the
    // server, for as long as it keeps the connection: drop both.
    if (reason === 'client_closed' || reason === 'slow_reader') this.out.destroy();
    else this.out.end();
    this.options.onEnd?.(reason);
  }

  private wake(): void {
    if (this.ended) return;
    if (this.out.writableNeedDrain && this.out.writableLength > this.options.maxBufferedBytes) {
      // More is waiting for a client that has not read what it was sent.
      this.end('slow_reader');
      return;
    }
    this.wokenWhilePumping = true;
    if (this.pumping) return;
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      // A wake-up that came after the pump's last read must not be lost.
      if (this.wokenWhilePumping && !this.out.writableNeedDrain) this.wake();
    });
  }

  private async pump(): Promise<void> {
    const { store, source, batchSize = 100 } = this.options;
    try {
      for (;;) {
        if (this.ended || this.out.writableNeedDrain) return;
        this.wokenWhilePumping = false;
        const rows = await store.readAfter(this.position, batchSize, source);
        if (this.ended) return;
        for (const row of rows) {
          this.write(`id: ${row.seq}\nevent: delivery\ndata: ${this.options.render(row)}\n\n`);
          if (this.ended) return;
          this.position = row.seq;
          // Wait for the client to read before sending more: 'drain' wakes the pump.
          if (this.out.writableNeedDrain) return;
        }
        if (rows.length < batchSize && !this.wokenWhilePumping) return;
      }
    } catch {
      this.end('store_error');
    }
  }

  /** Writes unless the client already left more than its buffer unread; then it is disconnected. */
  private write(text: string): void {
    if (this.ended) return;
    if (this.out.writableLength > this.options.maxBufferedBytes) {
      this.end('slow_reader');
      return;
    }
    this.out.write(text);
  }
}
