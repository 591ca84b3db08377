import type { Writable } from 'node:stream';
import type { InboxStore, StoredDelivery } from '../deliveries/delivery-store.js';
import type { RecentFrames } from './recent-frames.js';

export interface StreamSessionOptions {
  store: InboxStore;
  /** The hub's frames of the newest deliveries, when it holds them. */
  recent: () => RecentFrames | undefined;
  /** Sends deliveries whose seq is greater than this. */
  afterSeq: number;
  source?: string;
  /** Turns a delivery into its Server-Sent Events frame (`id`, `event`, `data`), shared with the other readers. */
  frame: (delivery: StoredDelivery) => Buffer;
  /** Bytes the client may leave unread before it is disconnected. */
  maxBufferedBytes: number;
  heartbeatMs: number;
  /** Deliveries read or taken at a time. */
  batchSize?: number;
  onEnd?: (reason: StreamEndReason) => void;
}

/** About what a page read from the store may hold, rendered, while its reader takes it. */
const PAGE_BYTES = 1024 * 1024;

interface PageFrame {
  seq: number;
  bytes: Buffer;
}

/** Deliveries read from the store and not all sent yet. */
interface StorePage {
  frames: PageFrame[];
  /** Index of the next frame to send. */
  next: number;
  /** Fewer rows came back than were asked for: the page reached the end of the inbox as it was. */
  complete: boolean;
  /** The hub's newest frame when the page was read: committed, so a complete page saw all up to it. */
  horizon: number | undefined;
}

/**
 * How many deliveries to read next, so that a page holds about PAGE_BYTES
 * (at least one delivery, at most `batchSize`), from the sizes of the last.
 */
function pageLimit(count: number, bytes: number, batchSize: number): number {
  return Math.max(1, Math.min(batchSize, Math.floor((PAGE_BYTES * count) / Math.max(1, bytes))));
}

/** Heartbeat intervals a reader may take nothing while events wait for it (2 minutes with the default 10 s). */
const STALLED_HEARTBEATS = 12;

export type StreamEndReason = 'client_closed' | 'slow_reader' | 'server_closing' | 'store_error';

/**
 * One Server-Sent Events client. Woken whenever the inbox may have grown,
 * it sends what follows its own position (the last `id` it sent): from the
 * hub's frames of the newest deliveries while those reach back to it, else
 * read from the store. Catch-up and live events are one loop: no gap, no
 * repeat.
 *
 * The next event is written only once the client took the ones before
 * (Node's 'drain'), so the server holds for a client at most its socket's
 * buffer, one event, and the rest of the page it read from the store (up to
 * about PAGE_BYTES, or one event when they are larger): a page is sent to its end
 * before the next is read, rather than read again after each event that
 * fills the socket (a reader catching up on large events read the store
 * once per event, each time a full page of them). A reader that leaves more than `maxBufferedBytes`
 * unread (one event larger than that) and takes nothing of it for a
 * heartbeat interval is disconnected, and what it left unread is dropped
 * with the connection; it can resume with `Last-Event-ID` (a client never
 * takes an event it did not get whole). A reader that is slowly taking a
 * large event is not cut off.
 */
export class StreamSession {
  private position: number;
  /** The last seq looked at: above `position` when frames of other sources were passed over. */
  private scanned: number;
  private pumping = false;
  private wokenWhilePumping = false;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  /** When the client last took some of what it was sent, and how much was still unread then. */
  private progressAt = Date.now();
  private unreadAtProgress = 0;
  /** The page last read from the store, until all of it is sent. */
  private page: StorePage | undefined;
  /** Deliveries the next store read asks for: fewer when they are large (see pageLimit). */
  private readLimit: number | undefined;

  constructor(
    private readonly out: Writable,
    private readonly options: StreamSessionOptions,
  ) {
    this.position = options.afterSeq;
    this.scanned = options.afterSeq;
    this.heartbeat = setInterval(() => this.tick(), options.heartbeatMs);
    out.once('close', () => this.end('client_closed'));
    out.on('drain', () => {
      this.noteProgress();
      this.wake();
    });
    // The client may have left while the route was getting ready ('close' came already).
    if (out.destroyed) {
      this.end('client_closed');
      return;
    }
    this.write('retry: 1000\n: connected\n\n');
    this.wake();
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /** The seq of the last delivery sent. */
  get lastSentSeq(): number {
    return this.position;
  }

  /** The last seq this reader has gone past, sent or not: the hub's frames up to it are no longer needed for it. */
  get lastScannedSeq(): number {
    return this.scanned;
  }

  end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    // A reader too slow to take what it was sent would hold it, on the
    // server, for as long as it keeps the connection: drop both.
    if (reason === 'client_closed' || reason === 'slow_reader') this.out.destroy();
    else this.out.end();
    this.options.onEnd?.(reason);
  }

  /** The inbox may have grown, or the client took what it was sent. */
  wake(): void {
    if (this.ended) return;
    if (this.isStalled()) {
      this.end('slow_reader');
      return;
    }
    this.wokenWhilePumping = true;
    if (this.pumping) return;
    // A reader among the hub's frames is sent them at once, without a promise: most wake-ups end here.
    if (this.page === undefined && this.sendRecent()) {
      this.wokenWhilePumping = false;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      // A wake-up that came after the pump's last read must not be lost.
      if (this.wokenWhilePumping && !this.out.writableNeedDrain) this.wake();
    });
  }

  /**
   * Sends what the hub's frames hold after this reader's position: a joined
   * run of them in one write where the reader is at one's start, else frame
   * by frame. False when they do not reach back to it (or the hub holds
   * none yet): the store must be read.
   */
  private sendRecent(): boolean {
    const { source, batchSize = 100 } = this.options;
    for (;;) {
      if (this.ended || this.out.writableNeedDrain) return true;
      const recent = this.options.recent();
      if (recent === undefined) return false;
      const run = recent.runAfter(this.scanned, source);
      if (run !== undefined) {
        if (run.lastSent !== undefined) {
          this.write(run.bytes);
          if (this.ended) return true;
          this.position = run.lastSent;
        }
        this.scanned = run.scannedTo;
        continue;
      }
      const taken = recent.after(this.scanned, batchSize, source);
      if (taken === undefined) return false;
      for (const frame of taken.frames) {
        this.write(frame.bytes);
        if (this.ended) return true;
        this.position = frame.seq;
        this.scanned = frame.seq;
        if (this.out.writableNeedDrain) return true;
      }
      this.scanned = taken.scannedTo;
      if (taken.frames.length < batchSize) return true;
    }
  }

  private async pump(): Promise<void> {
    const { store, source, batchSize = 100 } = this.options;
    try {
      for (;;) {
        if (this.ended || this.out.writableNeedDrain) return;
        this.wokenWhilePumping = false;
        if (this.page === undefined) {
          if (this.sendRecent()) {
            if (!this.wokenWhilePumping) return;
            continue;
          }
          // Everything up to the hub's newest frame is committed: a read that
          // comes back short has seen all of it, of this reader's source too.
          const horizon = this.options.recent()?.lastSeq;
          const limit = this.readLimit ?? batchSize;
          const rows = await store.readAfter(this.position, limit, source);
          if (this.ended) return;
          // Kept up to about PAGE_BYTES: the rest is read again, in a page sized to fit.
          const frames: PageFrame[] = [];
          let bytes = 0;
          for (const row of rows) {
            if (bytes >= PAGE_BYTES) break;
            const frame = { seq: row.seq, bytes: this.options.frame(row) };
            frames.push(frame);
            bytes += frame.bytes.length;
          }
          this.page = { frames, next: 0, complete: rows.length < limit && frames.length === rows.length, horizon };
          this.readLimit = frames.length === 0 ? batchSize : pageLimit(frames.length, bytes, batchSize);
        }
        const page: StorePage = this.page;
        while (page.next < page.frames.length) {
          const frame = page.frames[page.next] as PageFrame;
          page.next++;
          this.write(frame.bytes);
          if (this.ended) return;
          this.position = frame.seq;
          this.scanned = frame.seq;
          // Wait for the client to read before sending more: 'drain' wakes the
          // pump, which goes on with this page instead of reading it again.
          if (this.out.writableNeedDrain && page.next < page.frames.length) return;
        }
        this.page = undefined;
        // A reader of a quiet source so joins the hub's frames instead of reading the store at every commit.
        if (page.complete && page.horizon !== undefined) this.scanned = Math.max(this.scanned, page.horizon);
        if (page.complete && !this.wokenWhilePumping) return;
      }
    } catch {
      this.end('store_error');
    }
  }

  /** A heartbeat comment, unless events are waiting for the client anyway; and the check for a stalled reader. */
  private tick(): void {
    if (this.isStalled()) this.end('slow_reader');
    else if (!this.out.writableNeedDrain) this.write(': heartbeat\n\n');
  }

  private noteProgress(): void {
    this.progressAt = Date.now();
    this.unreadAtProgress = this.out.writableLength;
  }

  /**
   * More than the allowed bytes unread and none of them taken for a
   * heartbeat interval; or events waiting while the client took nothing for
   * STALLED_HEARTBEATS intervals (a reader that is gone without a word, or
   * never reads again, whose events are small).
   */
  private isStalled(): boolean {
    if (this.out.writableLength < this.unreadAtProgress) this.noteProgress();
    if (!this.out.writableNeedDrain) return false;
    const idleMs = Date.now() - this.progressAt;
    if (this.out.writableLength > this.options.maxBufferedBytes) return idleMs >= this.options.heartbeatMs;
    return idleMs >= STALLED_HEARTBEATS * this.options.heartbeatMs;
  }

  private write(chunk: string | Buffer): void {
    if (this.ended) return;
    const wasTaken = this.out.writableLength === 0;
    this.out.write(chunk);
    // The clock of a stall starts with the first byte left unread.
    if (wasTaken) this.noteProgress();
    else this.unreadAtProgress = Math.max(this.unreadAtProgress, this.out.writableLength);
  }
}
