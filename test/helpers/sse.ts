import { request, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SseClient {
  status: number;
  response: IncomingMessage;
  events: SseEvent[];
  comments: string[];
  /** Resolves once at least `count` events arrived. */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** A minimal Server-Sent Events client over node:http, so tests see every byte the server sends. */
export function connectSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(url, { headers: { accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (response) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters: Array<() => void> = [];
      let buffer = '';
      let current: SseEvent = { data: '' };
      let hasData = false;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) !== -1) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (hasData) events.push(current);
            current = { data: '' };
            hasData = false;
            for (const wake of waiters.splice(0)) wake();
          } else if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
          } else {
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') {
              current.data = hasData ? `${current.data}\n${value}` : value;
              hasData = true;
            } else if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
          }
        }
      });
      const ended = new Promise<void>((done) => {
        response.on('end', done);
        response.on('close', done);
        response.on('error', () => done());
      });
      resolve({
        status: response.statusCode ?? 0,
        response,
        events,
        comments,
        ended,
        waitForEvents: (count, timeoutMs = 10_000) =>
          new Promise((done, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`only ${events.length} of ${count} events within ${timeoutMs} ms`)),
              timeoutMs,
            );
            const check = (): void => {
              if (events.length >= count) {
                clearTimeout(timer);
                done(events);
              } else waiters.push(check);
            };
            check();
          }),
        close: () => {
          req.destroy();
          response.destroy();
        },
      });
    });
    req.end();
  });
}
