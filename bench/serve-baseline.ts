import type { Server } from 'node:http';

/**
 * Runs a baseline server of the bench (bare, reference) the way the bench
 * expects of every case: listens on BARE_HOST:BARE_PORT, prints the same
 * "listening" JSON line as Reception, and closes on SIGTERM.
 */
export function serveBaseline(server: Server): void {
  const host = process.env.BARE_HOST ?? '127.0.0.1';
  server.listen(Number(process.env.BARE_PORT ?? '0'), host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${host}:${port}` })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
