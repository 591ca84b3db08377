import { createServer } from 'node:http';

/**
 * The ceiling: a plain `node:http` server that reads each request's whole
 * body and answers 204, nothing else. Started by the bench as its own
 * process; prints the same "listening" JSON line as Reception.
 */
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(204).end();
  });
});

const host = process.env.BARE_HOST ?? '127.0.0.1';
server.listen(Number(process.env.BARE_PORT ?? '0'), host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${host}:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
