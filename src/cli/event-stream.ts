import { ApiError, apiError, cannotConnect } from './api-client.js';
import { Backoff, describeError, sleep } from './backoff.js';
import { CliError } from './usage.js';

/** One Server-Sent Event as dispatched by the stream. */
export interface SseEvent {
  /** The last event id seen so far (for Reception: the delivery's seq). */
  id: string | undefined;
  event: string;
  data: string;
}

export type StreamStatus =
  { kind: 'connected'; reconnected: boolean } | { kind: 'disconnected'; reason: string; retryInMs: number };

export interface EventStreamOptions {
  /** The stream URL, query included. */
  url: string;
  headers: Record<string, string>;
  /** Resume after this event id (sent as Last-Event-ID). */
  lastEventId?: string;
  /** Stops the stream: the generator returns. */
  signal: AbortSignal;
  /**
   * The server answered this command before (listen read the inbox first):
   * a first connection that fails is then waited out like a later one.
   * Otherwise a server that was never reached ends the stream with
   * "cannot connect" instead of retrying forever.
   */
  reached?: boolean;
  /** Reconnect when nothing (not even a heartbeat) arrives for this long. */
  idleTimeoutMs?: number;
  onStatus?: (status: StreamStatus) => void;
}

/**
 * Follows a Server-Sent Events stream over fetch and yields its events,
 * reconnecting with `Last-Event-ID` whenever the connection drops, ends or
 * goes quiet. The generator is pulled: the id sent on reconnect is the
 * last event the consumer has taken, so an event that was read but not
 * yet taken is read again rather than lost.
 *
 * It ends when the signal aborts. A refusal that retrying cannot fix
 * (401, 404...) is thrown as an ApiError; 408, 429 and 5xx are retried.
 */
export async function* eventStream(options: EventStreamOptions): AsyncGenerator<SseEvent, void, undefined> {
  const { signal, idleTimeoutMs = 45_000 } = options;
  const backoff = new Backoff(250, 10_000);
  let lastEventId = options.lastEventId;
  let connectedBefore = false;
  let reached = options.reached === true;
  while (!signal.aborted) {
    const connection = new AbortController();
    let reason = 'the server ended the stream';
    try {
      const headers: Record<string, string> = { ...options.headers, accept: 'text/event-stream', 'cache-control': 'no-cache' };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      let response: Response;
      try {
        response = await fetch(options.url, { headers, signal: AbortSignal.any([signal, connection.signal]) });
      } catch (error) {
        if (!reached && !signal.aborted) throw cannotConnect(options.url.replace(/\/api\/stream([?#].*)?$/, ''), error);
        throw error;
      }
      reached = true;
      if (!response.ok) {
        const error = await apiError(response);
        if (!error.transient) throw error;
        reason = error.message;
      } else if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || response.body === null) {
        throw new CliError(`${options.url} did not answer with an event stream; is --url a Reception server?`);
      } else {
        backoff.reset();
        options.onStatus?.({ kind: 'connected', reconnected: connectedBefore });
        connectedBefore = true;
        const parser = new SseParser();
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const chunk = await readWithin(reader, idleTimeoutMs, connection);
          if (chunk === undefined) break;
          for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
            if (event.id !== undefined) lastEventId = event.id;
            yield event;
            if (signal.aborted) return;
          }
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError || error instanceof CliError) throw error;
      reason = connection.signal.aborted ? describeError(connection.signal.reason) : describeError(error);
    } finally {
      connection.abort(new Error('closed'));
    }
    if (signal.aborted) return;
    const delay = backoff.next();
    options.onStatus?.({ kind: 'disconnected', reason, retryInMs: delay });
    await sleep(delay, signal);
  }
}

async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  timeoutMs: number,
  connection: AbortController,
): Promise<Uint8Array | undefined> {
  const timer = setTimeout(() => {
    connection.abort(new Error(`nothing arrived for ${Math.round(timeoutMs / 1000)} s, not even a heartbeat`));
  }, timeoutMs);
  try {
    const { done, value } = await reader.read();
    return done ? undefined : value;
  } finally {
    clearTimeout(timer);
  }
}

/** The SSE wire format (WHATWG HTML, "Parsing an event stream"), fed with text as it arrives. */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private type = '';
  private lastEventId: string | undefined;

  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone \r at the end may be the first half of \r\n: wait for more.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      const event =
        this.data.length === 0
          ? undefined
          : { id: this.lastEventId, event: this.type === '' ? 'message' : this.type, data: this.data.join('\n') };
      this.data = [];
      this.type = '';
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.type = value;
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    return undefined;
  }
}
