import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A real TCP relay in front of a server, so a test can make the server
 * "go away" for a client (cut every connection and refuse new ones) while
 * the server itself keeps receiving webhooks sent to it directly.
 */
export class TcpProxy {
  private server: Server | undefined;
  private port = 0;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly upstreamPort: number) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.upstreamPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Cuts every connection and stops accepting: the server is gone, as far as clients of the proxy can tell. */
  async cut(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}
