import type { Writable } from 'node:stream';
import type { InboxStore, StoredDelivery } from '../deliveries/delivery-store.js';
import type { CommitFeed } from '../deliveries/commit-feed.js';
import { RecentFrames } from './recent-frames.js';
import { StreamSession, type StreamSessionOptions } from './stream-session.js';

export interface StreamHubOptions {
  store: InboxStore;
  feed: CommitFeed;
  /** Turns a delivery into the `data:` JSON. */
  render: (delivery: StoredDelivery) => string;
  maxBufferedBytes: number;
  heartbeatMs: number;
}

/** Frames of the newest deliveries kept for readers that have not taken them yet. */
const RECENT_FRAMES = 2000;
const RECENT_BYTES = 16 * 1024 * 1024;
/** Under load, the hub reads and wakes its readers at most once in this time (a commit alone is sent at once). */
const FLUSH_MS = 10;
/** Deliveries read from the store at a time. */
const READ_BATCH = 100;

/**
 * Every open stream of this process. While any is open, the hub follows the
 * commit feed: after each commit it reads the new deliveries from the store
 * once, renders each once, joins the frames of that read into one Buffer,
 * and wakes the readers, who take the frames from it: a reader that was
 * sent everything before is sent the joined Buffer in one write. So a
 * commit costs one read and one rendering however many readers there are
 * (with a read per reader, 400 readers made receiving ten times slower),
 * and each reader one write (with a write per frame, 100 readers cost
 * about 2.5 µs of CPU per reader and delivery). A reader behind the frames
 * it holds reads the store itself.
 */
export class StreamHub {
  private readonly sessions = new Set<StreamSession>();
  private recent: RecentFrames | undefined;
  private unsubscribe: (() => void) | undefined;
  private refreshing = false;
  private refreshAgain = false;
  /** When the last refresh started, and the timer of one deferred to FLUSH_MS after it. */
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private deferred: NodeJS.Timeout | undefined;
  private readonly frames: SharedFrames;

  constructor(readonly options: StreamHubOptions) {
    this.frames = new SharedFrames(options.render);
  }

  open(out: Writable, options: Pick<StreamSessionOptions, 'afterSeq' | 'source' | 'onEnd'>): StreamSession {
    if (this.unsubscribe === undefined) this.follow();
    // Undefined while the constructor runs: a client that left already ends its session in there.
    let session: StreamSession | undefined = undefined;
    session = new StreamSession(out, {
      store: this.options.store,
      recent: () => this.recent,
      frame: (delivery) => this.frames.frameOf(delivery),
      maxBufferedBytes: this.options.maxBufferedBytes,
      heartbeatMs: this.options.heartbeatMs,
      ...options,
      onEnd: (reason) => {
        if (session !== undefined) this.sessions.delete(session);
        if (this.sessions.size === 0) this.unfollow();
        options.onEnd?.(reason);
      },
    });
    if (session.isOpen) this.sessions.add(session);
    return session;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Frames held for readers (for tests: it falls back to none once no one reads). */
  get recentFrames(): number {
    return this.recent?.size ?? 0;
  }

  closeAll(): void {
    for (const session of [...this.sessions]) session.end('server_closing');
  }

  private follow(): void {
    this.unsubscribe = this.options.feed.subscribe(() => this.committed());
    void this.refresh();
  }

  /**
   * A commit: refreshed at once when the last refresh is FLUSH_MS old, else
   * FLUSH_MS after it, so that under load the commits of a few milliseconds
   * reach each reader in one write (a write costs a reader a system call).
   */
  private committed(): void {
    if (this.deferred !== undefined) return;
    const wait = this.refreshedAt + FLUSH_MS - performance.now();
    if (wait <= 0) {
      void this.refresh();
      return;
    }
    this.deferred = setTimeout(() => {
      this.deferred = undefined;
      void this.refresh();
    }, wait);
  }

  private unfollow(): void {
    if (this.deferred !== undefined) clearTimeout(this.deferred);
    this.deferred = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.recent = undefined;
  }

  /** Reads what was committed since the last frame held, renders it once, and wakes every reader. */
  private async refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    this.refreshedAt = performance.now();
    const { store } = this.options;
    try {
      do {
        this.refreshAgain = false;
        if (this.unsubscribe === undefined) return;
        if (this.recent === undefined) {
          const latest = await store.latestSeq();
          if (this.unsubscribe === undefined) return;
          this.recent ??= new RecentFrames(latest, RECENT_FRAMES, RECENT_BYTES);
        }
        const recent: RecentFrames = this.recent;
        for (;;) {
          const rows = await store.readAfter(recent.lastSeq, READ_BATCH);
          if (this.recent !== recent) {
            // Every reader left meanwhile, and new ones may have come: start
            // over for them, so that a commit that came meanwhile is not left
            // waiting for the next one.
            this.refreshAgain = true;
            break;
          }
          recent.appendRun(rows.map((row) => ({ seq: row.seq, source: row.source, bytes: this.frames.frameOf(row) })));
          if (rows.length < READ_BATCH) break;
        }
      } while (this.refreshAgain);
    } catch {
      // The readers read the store themselves, and end if it fails them too.
      this.recent = undefined;
    } finally {
      this.refreshing = false;
    }
    let slowest = Number.POSITIVE_INFINITY;
    for (const session of [...this.sessions]) {
      session.wake();
      slowest = Math.min(slowest, session.lastScannedSeq);
    }
    if (slowest !== Number.POSITIVE_INFINITY) this.recent?.releaseThrough(slowest);
  }
}

/** Frames remembered at most (only the seq and a weak reference each); past it, the memory starts afresh. */
const SHARED_FRAMES = 10_000;

/**
 * Each delivery's frame, rendered once while any reader still holds it:
 * readers that catch up from the store (behind the hub's recent frames)
 * read the same deliveries at about the same time, and get the same
 * Buffer instead of a copy each. The references are weak, so a frame that
 * every socket has sent is freed as usual; a frame is the same for every
 * reader, whatever its source filter.
 */
class SharedFrames {
  private readonly bySeq = new Map<number, WeakRef<Buffer>>();
  private readonly forget = new FinalizationRegistry<number>((seq) => {
    if (this.bySeq.get(seq)?.deref() === undefined) this.bySeq.delete(seq);
  });

  constructor(private readonly render: (delivery: StoredDelivery) => string) {}

  frameOf(delivery: StoredDelivery): Buffer {
    const held = this.bySeq.get(delivery.seq)?.deref();
    if (held !== undefined) return held;
    const bytes = Buffer.from(`id: ${delivery.seq}\nevent: delivery\ndata: ${this.render(delivery)}\n\n`);
    if (this.bySeq.size >= SHARED_FRAMES) this.bySeq.clear();
    this.bySeq.set(delivery.seq, new WeakRef(bytes));
    this.forget.register(bytes, delivery.seq);
    return bytes;
  }
}
