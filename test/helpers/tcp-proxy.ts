import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A real TCP proxy on loopback in front of a server: the tests' one way to
 * make a server, a database or a broker go silent or go away for a client
 * while it keeps running.
 */
export interface TcpProxy {
  /** The proxy's loopback port; it stays the same through `cut()` and `restore()`. */
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /**
   * The connections open now stop carrying bytes either way, and stay open:
   * what a network blackhole or a firewall's silent cut looks like to both
   * ends. Connections made afterwards work.
   */
  freezeOpenConnections(): void;
  /** Cuts every connection and stops accepting: the server is gone, as far as the proxy's clients can tell. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy in front of `targetHost:targetPort`. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const frozen = new Set<Socket>();
  const relay = (inbound: Socket): void => {
    const outbound = connect(targetPort, targetHost);
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (!frozen.has(from)) to.write(chunk);
      });
    };
    forward(inbound, outbound);
    forward(outbound, inbound);
    const closeBoth = (): void => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', closeBoth).on('close', closeBoth);
    outbound.on('error', closeBoth).on('close', closeBoth);
  };
  const listen = async (port: number): Promise<Server> => {
    const server = createServer(relay);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return server;
  };
  const destroyAll = (): void => {
    for (const [inbound, outbound] of pairs) {
      inbound.destroy();
      outbound.destroy();
    }
  };
  let server: Server | undefined = await listen(0);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const stop = async (): Promise<void> => {
    const current = server;
    server = undefined;
    if (current === undefined) return;
    const closed = new Promise<void>((resolve) => current.close(() => resolve()));
    destroyAll();
    await closed;
  };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    freezeOpenConnections: () => {
      for (const [inbound, outbound] of pairs) {
        frozen.add(inbound);
        frozen.add(outbound);
      }
    },
    cut: stop,
    restore: async () => {
      server ??= await listen(port);
    },
    close: stop,
  };
}
