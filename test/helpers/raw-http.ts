import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One TCP connection that speaks HTTP/1.1 by hand, for what `fetch` cannot
 * do: send a request in pieces, trickle bytes, keep a connection idle.
 */
export class RawConnection {
  private received = Buffer.alloc(0);
  private responseWaiters: Array<() => void> = [];
  private closedAt: number | undefined;
  /** Resolves (with `performance.now()`) when the server closes or resets the connection. */
  readonly closed: Promise<number>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
    socket.on('error', () => {
      /* a reset counts as closed */
    });
    this.closed = new Promise((resolve) => {
      socket.once('close', () => {
        this.closedAt = performance.now();
        this.wake();
        resolve(this.closedAt);
      });
    });
  }

  static open(baseUrl: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.closedAt !== undefined;
  }

  /** Writes bytes; resolves once they are handed to the kernel. Fails quietly on a closed socket. */
  write(data: string | Buffer): Promise<boolean> {
    if (this.socket.destroyed || !this.socket.writable) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.socket.write(data, (error) => resolve(error === undefined || error === null));
    });
  }

  /** Resolves once the server sent `100 Continue` (it has read the head and handles the request). */
  async continued(): Promise<boolean> {
    for (;;) {
      if (/^HTTP\/1\.1 100 /.test(this.received.toString('latin1'))) return true;
      if (this.isClosed) return false;
      await new Promise<void>((resolve) => this.responseWaiters.push(resolve));
    }
  }

  /**
   * The first complete final response (interim 1xx ones are skipped), or
   * undefined when the server closed the connection before sending one.
   */
  async response(): Promise<RawResponse | undefined> {
    for (;;) {
      const parsed = parseResponse(this.received);
      if (parsed !== undefined) return parsed;
      if (this.isClosed) return undefined;
      await new Promise<void>((resolve) => this.responseWaiters.push(resolve));
    }
  }

  /** Every complete final response received so far, in order. */
  responsesSoFar(): RawResponse[] {
    const all: RawResponse[] = [];
    let rest: Buffer = this.received;
    for (;;) {
      const next = parseNext(rest);
      if (next === undefined) return all;
      all.push(next.response);
      rest = next.rest;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const waiters = this.responseWaiters;
    this.responseWaiters = [];
    for (const wake of waiters) wake();
  }
}

function parseResponse(data: Buffer): RawResponse | undefined {
  return parseNext(data)?.response;
}

/** The first complete final response in `data` (interim 1xx ones are skipped), and the bytes after it. */
function parseNext(data: Buffer): { response: RawResponse; rest: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!Number.isInteger(status)) return undefined;
  if (status >= 100 && status < 200) return parseNext(data.subarray(end + 4));
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? '0');
  const body = data.subarray(end + 4);
  if (body.length < length) return undefined;
  return { response: { status, headers, body: body.subarray(0, length).toString('utf8') }, rest: body.subarray(length) };
}

/** The head of a POST with a JSON body of `length` bytes. */
export function postHead(path: string, length: number, extra = ''): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` + `Content-Length: ${length}\r\n${extra}\r\n`
  );
}
