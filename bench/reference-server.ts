import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Database } from '../src/platform/db/sqlite/driver.js';
import { outboxPump, type OutboxPump } from './reference-outbox.js';
import { serveBaseline } from './serve-baseline.js';

/**
 * The reference designs that issue 2 quotes, measured in the same run as
 * Reception so that its targets can be read against this machine:
 *
 * - `answer`: reads the body, `JSON.parse`s it and answers 200 with the
 *   `{ id, source, receivedAt }` JSON that the contract asks for, storing
 *   nothing. No receiver that answers as the contract says can beat it.
 * - `sqlite-full` / `sqlite-normal`: the prototype, `node:http` +
 *   `JSON.parse` + better-sqlite3 group commit (WAL, `synchronous=FULL` or
 *   `NORMAL`): the deliveries read in one turn of the event loop share one
 *   transaction, and each is answered after it. One table, no headers
 *   redaction, no logs, no metrics.
 * - `sqlite-full-outbox`: `sqlite-full` that also writes a row of `outbox`
 *   in each delivery's transaction and forwards it to REFERENCE_FORWARD_URL
 *   (bench/reference-outbox.ts): the floor of forwarding as a service.
 *   `GET /stats` answers `{ stored, forwarded }`.
 *
 * With REFERENCE_STREAM=1 (any mode) it also serves `GET /api/stream` (any
 * `Authorization` accepted) and fans every answered delivery out to its
 * readers: one Server-Sent Events frame per delivery, rendered once, with
 * the fields of Reception's Delivery JSON in its order and the JSON body
 * as the sender's text (as Reception puts it), the header pairs as
 * received; the frames of one turn of the event loop are joined and
 * written to every reader in one `write` each. No store behind it, no
 * reading back, no backpressure, no heartbeats: the floor of a fan-out to
 * live readers (issue 22 part 5).
 */
type Mode = 'answer' | 'sqlite-full' | 'sqlite-normal' | 'sqlite-full-outbox';

const mode = process.env.REFERENCE_MODE as Mode | undefined;
if (mode !== 'answer' && mode !== 'sqlite-full' && mode !== 'sqlite-normal' && mode !== 'sqlite-full-outbox') {
  throw new Error('REFERENCE_MODE must be answer, sqlite-full, sqlite-normal or sqlite-full-outbox');
}
/** Outbox rows sent at once by the `sqlite-full-outbox` pump: REFERENCE_FORWARD_CONCURRENCY, else Reception's default `concurrency`. */
const FORWARD_CONCURRENCY = Number(process.env.REFERENCE_FORWARD_CONCURRENCY ?? '10');

interface Pending {
  id: string;
  source: string;
  receivedAt: number;
  headers: string;
  raw: Buffer;
  res: ServerResponse;
  /** For the stream: the body's `type` and the header lines as received. */
  eventType?: unknown;
  rawHeaders?: string[];
}

const JSON_TYPE = 'application/json; charset=utf-8';

const streaming = process.env.REFERENCE_STREAM === '1';
const readers = new Set<ServerResponse>();
let frames: string[] = [];
let fanOutScheduled = false;
let lastSeq = 0;

/** One turn's frames, joined once, one write to each reader. */
function fanOut(): void {
  fanOutScheduled = false;
  const joined = Buffer.from(frames.join(''));
  frames = [];
  for (const reader of readers) reader.write(joined);
}

/**
 * The delivery's frame, the same fields as Reception's Delivery JSON
 * (src/deliveries/delivery-json.ts), queued for the next fan-out.
 */
function queueFrame(d: Pending, receivedAt: string, eventType: unknown, rawHeaders: string[]): void {
  const seq = ++lastSeq;
  const pairs: string[][] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) pairs.push([rawHeaders[i] as string, rawHeaders[i + 1] as string]);
  const fields = {
    id: d.id,
    seq,
    source: d.source,
    eventType: typeof eventType === 'string' ? eventType : null,
    receivedAt,
    method: 'POST',
    query: '',
    contentType: 'application/json',
    size: d.raw.length,
    remoteAddress: '127.0.0.1',
    headers: pairs,
  };
  frames.push(
    `id: ${seq}\nevent: delivery\ndata: ${JSON.stringify(fields).slice(0, -1)},"body":${d.raw.toString('utf8')},"verification":{"status":"none"},"forwards":[]}\n\n`,
  );
  if (!fanOutScheduled) {
    fanOutScheduled = true;
    setImmediate(fanOut);
  }
}

function answer(res: ServerResponse, id: string, source: string, receivedAt: number): string {
  const at = new Date(receivedAt).toISOString();
  const body = JSON.stringify({ id, source, receivedAt: at });
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return at;
}

let pump: OutboxPump | undefined;
let stored = 0;

function openCommit(): (batch: Pending[]) => void {
  const dir = process.env.REFERENCE_DATA ?? '.';
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'reference.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${mode === 'sqlite-normal' ? 'NORMAL' : 'FULL'}`);
  db.exec(`CREATE TABLE IF NOT EXISTS deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
    received_at INTEGER NOT NULL, headers TEXT NOT NULL, raw BLOB NOT NULL)`);
  const insert = db.prepare('INSERT INTO deliveries (id, source, received_at, headers, raw) VALUES (?, ?, ?, ?, ?)');
  if (mode !== 'sqlite-full-outbox') {
    return db.transaction((batch: Pending[]) => {
      for (const d of batch) insert.run(d.id, d.source, d.receivedAt, d.headers, d.raw);
    });
  }
  const url = process.env.REFERENCE_FORWARD_URL;
  if (url === undefined) throw new Error('REFERENCE_MODE=sqlite-full-outbox needs REFERENCE_FORWARD_URL');
  const forwarding = outboxPump(db, url, FORWARD_CONCURRENCY);
  pump = forwarding;
  const enqueue = db.prepare('INSERT INTO outbox (seq) VALUES (?)');
  const transaction = db.transaction((batch: Pending[]) => {
    for (const d of batch) enqueue.run(insert.run(d.id, d.source, d.receivedAt, d.headers, d.raw).lastInsertRowid);
  });
  return (batch) => {
    transaction(batch);
    stored += batch.length;
    forwarding.wake();
  };
}

const commit = mode === 'answer' ? undefined : openCommit();
let pending: Pending[] = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  const batch = pending;
  pending = [];
  commit?.(batch);
  for (const d of batch) {
    const at = answer(d.res, d.id, d.source, d.receivedAt);
    if (streaming) queueFrame(d, at, d.eventType, d.rawHeaders ?? []);
  }
}

function openStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
  });
  res.write('retry: 1000\n: connected\n\n');
  readers.add(res);
  res.once('close', () => readers.delete(res));
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const body = JSON.stringify({ stored, forwarded: pump?.stats().forwarded ?? 0 });
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) }).end(body);
    return;
  }
  if (streaming && req.method === 'GET' && (req.url ?? '').startsWith('/api/stream')) {
    openStream(res);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    const parsed = JSON.parse(raw.toString('utf8')) as { type?: unknown } | null;
    const source = (req.url ?? '').split('/')[3] ?? '';
    const delivery: Pending = {
      id: randomUUID(),
      source,
      receivedAt: Date.now(),
      headers: JSON.stringify(req.rawHeaders),
      raw,
      res,
    };
    if (streaming) {
      delivery.eventType = parsed?.type;
      delivery.rawHeaders = req.rawHeaders;
    }
    if (commit === undefined) {
      const at = answer(res, delivery.id, source, delivery.receivedAt);
      if (streaming) queueFrame(delivery, at, delivery.eventType, req.rawHeaders);
      return;
    }
    pending.push(delivery);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
});

serveBaseline(server);
