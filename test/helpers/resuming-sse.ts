import { connectSse, type SseClient } from './sse.js';

export interface StreamedDelivery {
  seq: number;
  id: string;
}

/**
 * A stream client that behaves like a browser's EventSource: when the stream
 * ends or cannot be opened, it reconnects after a pause and resumes with
 * `Last-Event-ID` (the first connection starts at `?after=`). `received`
 * is the union of every connection's events, in the order they arrived.
 */
export class ResumingSseClient {
  readonly received: StreamedDelivery[] = [];
  /** Connections that answered 200. */
  connections = 0;
  /** Attempts that failed or answered something else, by status or error code. */
  readonly failedAttempts = new Map<string, number>();
  private current: SseClient | undefined;
  private taken = 0;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly options: { after?: number; retryMs?: number } = {},
  ) {
    this.loop = this.run();
  }

  /** The last seq received, or undefined before the first event. */
  get lastSeq(): number | undefined {
    this.collect();
    return this.received.at(-1)?.seq;
  }

  /** Resolves once `seq` (or a later one) was received; rejects after `timeoutMs`. */
  async waitForSeq(seq: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while ((this.lastSeq ?? 0) < seq) {
      if (performance.now() > deadline) {
        throw new Error(
          `stream client on ${this.baseUrl} reached seq ${this.lastSeq ?? 'none'}, not ${seq}, within ${timeoutMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.collect();
    this.current?.close();
    await this.loop;
    this.collect();
  }

  private async run(): Promise<void> {
    const retryMs = this.options.retryMs ?? 500;
    while (!this.stopped) {
      const last = this.lastSeq;
      const query = last === undefined ? `?after=${this.options.after ?? 0}` : '';
      const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
      if (last !== undefined) headers['last-event-id'] = String(last);
      try {
        const client = await connectSse(`${this.baseUrl}/api/stream${query}`, headers);
        if (client.status === 200) {
          this.connections++;
          this.current = client;
          this.taken = 0;
          if (!this.stopped) await client.ended;
          this.collect();
          client.close();
          this.current = undefined;
        } else {
          this.count(`HTTP ${client.status}`);
          client.close();
        }
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        this.count(typeof code === 'string' ? code : String(error));
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }

  /** Moves the events of the current connection that were not yet taken into `received`. */
  private collect(): void {
    const events = this.current?.events;
    if (events === undefined) return;
    for (; this.taken < events.length; this.taken++) {
      const event = events[this.taken];
      if (event === undefined || event.event !== 'delivery') continue;
      const delivery = JSON.parse(event.data) as { id: string; seq: number };
      if (String(delivery.seq) !== event.id)
        throw new Error(`event id ${event.id ?? 'none'} is not the delivery's seq ${delivery.seq}`);
      this.received.push({ seq: delivery.seq, id: delivery.id });
    }
  }

  private count(reason: string): void {
    this.failedAttempts.set(reason, (this.failedAttempts.get(reason) ?? 0) + 1);
  }
}

/** Describes how `received` differs from the inbox's seqs (ascending): gaps, repeats, disorder. Empty when equal. */
export function streamProblems(received: readonly StreamedDelivery[], inboxSeqs: readonly number[]): string[] {
  const problems: string[] = [];
  const seqs = received.map((d) => d.seq);
  for (let i = 1; i < seqs.length; i++) {
    const previous = seqs[i - 1] ?? 0;
    const current = seqs[i] ?? 0;
    if (current === previous) problems.push(`seq ${current} received twice in a row`);
    else if (current < previous) problems.push(`seq ${current} received after ${previous}`);
  }
  const got = new Set(seqs);
  const missing = inboxSeqs.filter((seq) => !got.has(seq));
  if (missing.length > 0) problems.push(`${missing.length} seqs never received, e.g. ${missing.slice(0, 5).join(', ')}`);
  const inbox = new Set(inboxSeqs);
  const extra = seqs.filter((seq) => !inbox.has(seq));
  if (extra.length > 0)
    problems.push(`${extra.length} seqs received that are not in the inbox, e.g. ${extra.slice(0, 5).join(', ')}`);
  if (seqs.length !== new Set(seqs).size) problems.push(`${seqs.length - new Set(seqs).size} repeats`);
  return problems;
}
