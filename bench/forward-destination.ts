import { createServer } from 'node:http';
import { serveBaseline } from './serve-baseline.js';

/**
 * The destination of the forwarding cases: a bare `node:http` server, in
 * its own process, that reads each request's whole body and answers 204 at
 * once, and counts what it answered. `GET /count` answers
 * `{"received": n, "bytes": b}` (the bench reads it to know when a drain is
 * done and to cross-check the store). Prints the same "listening" line as
 * the other servers of the bench.
 */
let received = 0;
let bytes = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    const body = JSON.stringify({ received, bytes });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    return;
  }
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    length += chunk.length;
  });
  req.on('end', () => {
    received++;
    bytes += length;
    res.writeHead(204).end();
  });
});

serveBaseline(server);
