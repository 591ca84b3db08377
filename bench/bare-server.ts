import { createServer } from 'node:http';
import { serveBaseline } from './serve-baseline.js';

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

serveBaseline(server);
