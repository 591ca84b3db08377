import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { serveBaseline } from './serve-baseline.js';

/**
 * The floor of forwarding latency (issue 30): a relay that reads each
 * webhook, answers 200 with the `{ id, source, receivedAt }` JSON the
 * contract asks for, then POSTs the same bytes on to RELAY_TO with undici
 * (one keep-alive pool, as many requests at once as come in), storing
 * nothing and retrying nothing. No receiver that forwards can hand a
 * webhook on sooner. Prints the same "listening" line as the bench's other
 * servers.
 */
const target = process.env.RELAY_TO;
if (target === undefined) throw new Error('RELAY_TO: the URL to POST each webhook on to');
const url = new URL(target);
const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const source = (req.url ?? '').split('/').pop() ?? '';
    const answer = JSON.stringify({ id: randomUUID(), source, receivedAt: new Date().toISOString() });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
    pool
      .request({
        method: 'POST',
        path: url.pathname,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body,
      })
      .then((response) => response.body.dump())
      .catch(() => undefined);
  });
});

serveBaseline(server);
