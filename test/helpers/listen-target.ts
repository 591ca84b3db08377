import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  /** Path and query as requested. */
  url: string;
  /** Node's rawHeaders: name, value, name, value... as sent. */
  rawHeaders: string[];
  body: Buffer;
}

/**
 * A real HTTP server that records every request it gets: where `listen`
 * and `replay` send deliveries. It can be stopped and started again on the
 * same port (a local app restarting), and told which status to answer.
 */
export class Target {
  readonly received: Received[] = [];
  /** The status of the next answers (a function to vary it per request). */
  status: (request: Received) => number = () => 200;
  private server: Server | undefined;
  private port = 0;

  async start(): Promise<void> {
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received: Received = {
          method: req.method ?? '',
          url: req.url ?? '',
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
        };
        this.received.push(received);
        res.writeHead(this.status(received), { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and drops every connection: the target is down. */
  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }
}

/** The value of a header in a rawHeaders list (first match, any case). */
export function headerValue(rawHeaders: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name.toLowerCase()) return rawHeaders[i + 1];
  }
  return undefined;
}

/** rawHeaders as [name, value] pairs. */
export function headerPairs(rawHeaders: string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i] ?? '', rawHeaders[i + 1] ?? '']);
  return pairs;
}
