import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a destination received, exactly as it arrived. */
export interface ReceivedRequest {
  method: string;
  url: string;
  /** Names and values in arrival order (Node's rawHeaders). */
  rawHeaders: string[];
  /** Header names in lower case. */
  headers: IncomingMessage['headers'];
  body: Buffer;
  at: number;
  /** When the answer was written (ms); absent while it is not (a slow answer, a hang). */
  answeredAt?: number;
}

/** What the destination answers to the n-th request (from 1) it received. */
export type Answer = (
  request: ReceivedRequest,
  n: number,
) => { status: number; headers?: Record<string, string>; body?: string | Buffer; delayMs?: number } | 'hang';

/**
 * A real HTTP destination on loopback that records every request and
 * answers as the test says (204 by default).
 */
export class DestinationServer {
  readonly requests: ReceivedRequest[] = [];
  answer: Answer = () => ({ status: 204 });
  private readonly server: Server;
  private readonly hanging = new Set<ServerResponse>();

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received: ReceivedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          rawHeaders: req.rawHeaders,
          headers: req.headers,
          body: Buffer.concat(chunks),
          at: Date.now(),
        };
        this.requests.push(received);
        const answer = this.answer(received, this.requests.length);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        const send = (): void => {
          received.answeredAt = Date.now();
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        };
        if (answer.delayMs === undefined) send();
        else setTimeout(send, answer.delayMs);
      });
    });
  }

  async listen(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return this.url;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Requests whose `webhook-id` is the delivery's id. */
  requestsFor(deliveryId: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.headers['webhook-id'] === deliveryId);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
