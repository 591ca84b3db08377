import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** `127.0.0.1:<port>` of the proxy. */
  port: number;
  /**
   * The connections open now stop carrying bytes either way, and stay open:
   * what a network blackhole or a firewall's silent cut looks like to both
   * ends. Connections made afterwards work.
   */
  freezeOpenConnections(): void;
  /** The target goes away: open connections are reset and new ones refused (the port stops listening), until `restore`. */
  cut(): Promise<void>;
  /** Listens on the same port again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A real TCP proxy on loopback in front of `target`, for tests of a server that stops answering. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const frozen = new Set<Socket>();
  const server: Server = createServer((inbound) => {
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const dropAll = (): void => {
    for (const [inbound, outbound] of pairs) {
      inbound.resetAndDestroy();
      outbound.destroy();
    }
  };
  return {
    port,
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      dropAll();
      await closed;
    },
    restore: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    freezeOpenConnections: () => {
      for (const [inbound, outbound] of pairs) {
        frozen.add(inbound);
        frozen.add(outbound);
      }
    },
    close: async () => {
      for (const [inbound, outbound] of pairs) {
        inbound.destroy();
        outbound.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
