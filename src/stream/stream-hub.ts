import type { Writable } from 'node:stream';
import type { InboxStore } from '../store/inbox-store.js';
import type { CommitFeed } from './commit-feed.js';
import { StreamSession, type StreamSessionOptions } from './stream-session.js';

export interface StreamHubOptions {
  store: InboxStore;
  feed: CommitFeed;
  maxBufferedBytes: number;
  heartbeatMs: number;
}

/** Every open stream of this process, so that shutdown can end them and tests can count them. */
export class StreamHub {
  private readonly sessions = new Set<StreamSession>();

  constructor(readonly options: StreamHubOptions) {}

  open(out: Writable, options: Pick<StreamSessionOptions, 'afterSeq' | 'source' | 'render' | 'onEnd'>): StreamSession {
    const session: StreamSession = new StreamSession(out, {
      store: this.options.store,
      feed: this.options.feed,
      maxBufferedBytes: this.options.maxBufferedBytes,
      heartbeatMs: this.options.heartbeatMs,
      ...options,
      onEnd: (reason) => {
        this.sessions.delete(session);
        options.onEnd?.(reason);
      },
    });
    this.sessions.add(session);
    return session;
  }

  get size(): number {
    return this.sessions.size;
  }

  closeAll(): void {
    for (const session of [...this.sessions]) session.end('server_closing');
  }
}
