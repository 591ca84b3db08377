// The live feed: an EventSource on /api/stream that always knows its place.
// It starts after a given seq; the browser resumes with Last-Event-ID after a
// dropped connection, and when the server refuses a reconnect (restarting,
// 503) a new EventSource starts after the last seq seen, so nothing is
// skipped or shown twice.

import { listSources, Unauthorized, type Delivery } from './api.ts';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'offline';

export interface LiveHandlers {
  onDelivery(delivery: Delivery): void;
  onState(state: LiveState): void;
}

const RETRY_MS = 3000;

export class LiveStream {
  private source: EventSource | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private lastSeq = 0;
  private stopped = false;

  constructor(private readonly handlers: LiveHandlers) {}

  /** Starts streaming every delivery after `afterSeq`. */
  start(afterSeq: number): void {
    this.stopped = false;
    this.lastSeq = afterSeq;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    this.source?.close();
    this.source = undefined;
  }

  private connect(): void {
    this.handlers.onState('connecting');
    const source = new EventSource(`/api/stream?after=${this.lastSeq}`);
    this.source = source;
    source.addEventListener('open', () => this.handlers.onState('live'));
    source.addEventListener('delivery', (event: MessageEvent<string>) => {
      const seq = Number(event.lastEventId);
      if (Number.isSafeInteger(seq) && seq > this.lastSeq) this.lastSeq = seq;
      let delivery: Delivery;
      try {
        delivery = JSON.parse(event.data) as Delivery;
      } catch {
        return;
      }
      this.handlers.onDelivery(delivery);
    });
    source.addEventListener('error', () => {
      if (source !== this.source) return;
      if (source.readyState === EventSource.CONNECTING) {
        this.handlers.onState('reconnecting');
        return;
      }
      // Closed for good by the browser (an error status): find out why, then start over.
      source.close();
      this.handlers.onState('offline');
      this.retry = setTimeout(() => void this.reconnect(), RETRY_MS);
    });
  }

  private async reconnect(): Promise<void> {
    this.retry = undefined;
    if (this.stopped) return;
    try {
      await listSources({ limit: 1 });
    } catch (error) {
      // Logged out: the page shows the login form and stops this stream.
      if (error instanceof Unauthorized) return;
    }
    if (!this.stopped) this.connect();
  }
}
