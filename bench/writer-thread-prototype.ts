import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { checkJsonBody } from '../src/body/parse-json.js';
import { Database } from '../src/platform/db/sqlite/driver.js';
import { newDeliveryId } from '../src/deliveries/delivery-id.js';
import type { NewDelivery } from '../src/deliveries/delivery-store.js';
import { eventTypeOf } from '../src/event-types/event-type.js';
import { SqliteStore } from '../src/inbox/sqlite-store.js';
import { headerList as toHeaderList, type HeaderList } from '../src/platform/http/header-list.js';
import { serveBaseline } from './serve-baseline.js';

/**
 * Issue 22 part 2, a prototype (not Reception): does a writer thread that
 * owns the SQLite connection pay? The same server either way: `node:http`,
 * the body read into one Buffer, checked as Reception checks JSON (isUtf8
 * and json-scan), group commit of the deliveries read in one turn of the
 * event loop (at most 16 MiB of bodies, one transaction in flight, as
 * Reception's write queue), WAL, synchronous=FULL, a checkpoint every 250
 * pages, and each delivery answered after its commit.
 * WRITER_MODE=inline commits on the event loop (Reception's design);
 * WRITER_MODE=thread posts each batch to a worker thread, one message per
 * batch with the bodies transferred (a body that owns its ArrayBuffer is
 * moved; a smaller one, a view into the socket's buffer, is copied once),
 * and answers when the worker says it committed. WRITER_DATA: the directory.
 * WRITER_CHECKPOINTS=thread (with inline): a worker thread with a second
 * connection runs `wal_checkpoint(PASSIVE)` every 5 ms, and the committing
 * connection's own checkpoints start only past 4,000 pages (a safety net),
 * to measure what moving the WAL's second write off the event loop buys.
 * WRITER_SCHEMA=reception (issue 30): the commit is Reception's own
 * (`SqliteStore.append` on its schema, with its checkpoint thread): each
 * delivery with its headers as Reception keeps them, its event type (read
 * on the event loop, as the receiver does) and one forward to a pull
 * destination, so that the commit carries what a default Reception's does
 * (the indexes, the counts, the outbox row), on the event loop or in the
 * writer thread.
 */

interface Batch {
  ids: string[];
  sources: string[];
  receivedAts: number[];
  headers: string[];
  bodies: Uint8Array[];
  /** WRITER_SCHEMA=reception: the headers as Reception keeps them, and each delivery's event type. */
  headerLists?: HeaderList[];
  eventTypes?: Array<string | null>;
}

type Commit = (batch: Batch) => void | Promise<void>;

const receptionSchema = process.env.WRITER_SCHEMA === 'reception';

/** Reception's own commit: its store, its schema, its checkpoint thread; one forward per delivery to a pull destination. */
function openReceptionCommit(dir: string): Commit {
  mkdirSync(dir, { recursive: true });
  const store = new SqliteStore({ file: join(dir, 'reception.sqlite'), durability: 'full', checkpointThread: true });
  return async (batch: Batch) => {
    const deliveries = batch.ids.map((id, i): NewDelivery => {
      const body = batch.bodies[i] as Uint8Array;
      return {
        id,
        source: batch.sources[i] as string,
        receivedAt: batch.receivedAts[i] as number,
        method: 'POST',
        query: '',
        contentType: 'application/json',
        remoteAddress: '127.0.0.1',
        headers: batch.headerLists?.[i] ?? [],
        raw: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
        verification: { status: 'none' },
        dedupKey: null,
        eventType: batch.eventTypes?.[i] ?? null,
        forwards: [{ id: randomUUID(), destination: 'worker', transform: null }],
      };
    });
    for (const outcome of await store.append(deliveries)) if (outcome.duplicate) throw new Error('a duplicate');
  };
}

const MAX_BATCH_BYTES = 16 * 1024 * 1024;
const NO_REDACTION: ReadonlySet<string> = new Set();

function openCommit(dir: string, checkpointPages = 250): (batch: Batch) => void {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'writer.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`wal_autocheckpoint = ${checkpointPages}`);
  db.exec(`CREATE TABLE IF NOT EXISTS deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
    received_at INTEGER NOT NULL, headers TEXT NOT NULL, raw BLOB NOT NULL)`);
  const insert = db.prepare('INSERT INTO deliveries (id, source, received_at, headers, raw) VALUES (?, ?, ?, ?, ?)');
  return db.transaction((batch: Batch) => {
    batch.ids.forEach((id, i) => {
      const body = batch.bodies[i] as Uint8Array;
      insert.run(
        id,
        batch.sources[i],
        batch.receivedAts[i],
        batch.headers[i],
        Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      );
    });
  });
}

if (!isMainThread && (workerData as { checkpoints?: boolean }).checkpoints === true) {
  const db = new Database(join((workerData as { dir: string }).dir, 'writer.sqlite'));
  db.pragma('busy_timeout = 0');
  db.pragma('synchronous = FULL');
  setInterval(() => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // busy: the next tick tries again
    }
  }, 5);
} else if (!isMainThread) {
  const dir = (workerData as { dir: string }).dir;
  const commit: Commit = receptionSchema ? openReceptionCommit(dir) : openCommit(dir);
  parentPort?.on('message', (batch: Batch) => {
    Promise.resolve()
      .then(() => commit(batch))
      .then(
        () => parentPort?.postMessage({ ok: true }),
        (error: unknown) => parentPort?.postMessage({ ok: false, error: String(error) }),
      );
  });
} else {
  const mode = process.env.WRITER_MODE;
  if (mode !== 'inline' && mode !== 'thread') throw new Error('WRITER_MODE must be inline or thread');
  const dir = process.env.WRITER_DATA ?? '.';

  interface Pending {
    id: string;
    source: string;
    receivedAt: number;
    headers: string;
    headerList?: HeaderList;
    eventType?: string | null;
    raw: Buffer;
    res: ServerResponse;
  }

  const answer = (d: Pending): void => {
    const body = JSON.stringify({ id: d.id, source: d.source, receivedAt: new Date(d.receivedAt).toISOString() });
    d.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    d.res.end(body);
  };
  const refuse = (d: Pending): void => {
    d.res.writeHead(503).end();
  };

  let commitInline: Commit | undefined;
  let worker: Worker | undefined;
  let workerDone: ((ok: boolean) => void) | undefined;
  const checkpointThread = process.env.WRITER_CHECKPOINTS === 'thread';
  if (mode === 'inline') {
    commitInline = receptionSchema ? openReceptionCommit(dir) : openCommit(dir, checkpointThread ? 4000 : 250);
    if (checkpointThread && !receptionSchema)
      new Worker(new URL(import.meta.url), { workerData: { dir, checkpoints: true } }).unref();
  } else {
    worker = new Worker(new URL(import.meta.url), { workerData: { dir } });
    worker.on('message', (reply: { ok: boolean }) => workerDone?.(reply.ok));
  }

  const toBatch = (items: Pending[]): { batch: Batch; transfer: ArrayBuffer[] } => {
    const transfer: ArrayBuffer[] = [];
    const bodies = items.map((d) => {
      const owns = d.raw.byteOffset === 0 && d.raw.byteLength === d.raw.buffer.byteLength && mode === 'thread';
      const body = owns ? new Uint8Array(d.raw.buffer, 0, d.raw.byteLength) : new Uint8Array(d.raw);
      if (mode === 'thread') transfer.push(body.buffer as ArrayBuffer);
      return body;
    });
    return {
      batch: {
        ids: items.map((d) => d.id),
        sources: items.map((d) => d.source),
        receivedAts: items.map((d) => d.receivedAt),
        headers: items.map((d) => d.headers),
        bodies,
        ...(receptionSchema
          ? { headerLists: items.map((d) => d.headerList ?? []), eventTypes: items.map((d) => d.eventType ?? null) }
          : {}),
      },
      transfer,
    };
  };

  const pending: Pending[] = [];
  let flushing = false;
  let scheduled = false;

  const take = (): Pending[] => {
    let bytes = 0;
    let count = 0;
    while (count < pending.length) {
      bytes += (pending[count] as Pending).raw.length;
      if (count > 0 && bytes > MAX_BATCH_BYTES) break;
      count++;
    }
    const items = pending.splice(0, count);
    return items;
  };

  const schedule = (): void => {
    if (scheduled || flushing) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  };

  const flush = async (): Promise<void> => {
    flushing = true;
    const items = take();
    let ok = true;
    try {
      if (commitInline !== undefined) {
        // The inline commit needs no copy: the Buffers go to SQLite as they are.
        await commitInline({
          ids: items.map((d) => d.id),
          sources: items.map((d) => d.source),
          receivedAts: items.map((d) => d.receivedAt),
          headers: items.map((d) => d.headers),
          bodies: items.map((d) => d.raw),
          ...(receptionSchema
            ? { headerLists: items.map((d) => d.headerList ?? []), eventTypes: items.map((d) => d.eventType ?? null) }
            : {}),
        });
      } else {
        const { batch, transfer } = toBatch(items);
        ok = await new Promise<boolean>((resolve) => {
          workerDone = resolve;
          worker?.postMessage(batch, transfer);
        });
      }
    } catch {
      ok = false;
    }
    flushing = false;
    for (const d of items) (ok ? answer : refuse)(d);
    if (pending.length > 0) schedule();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      try {
        checkJsonBody(raw);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const source = (req.url ?? '').split('/')[3] ?? '';
      if (receptionSchema) {
        // What the receiver does before the commit: the header list and the event type.
        const headerList = toHeaderList(req.rawHeaders, NO_REDACTION);
        const eventType = eventTypeOf({ scheme: undefined, headers: headerList, contentType: 'application/json', raw });
        pending.push({ id: newDeliveryId(), source, receivedAt: Date.now(), headers: '', headerList, eventType, raw, res });
      } else {
        pending.push({ id: randomUUID(), source, receivedAt: Date.now(), headers: JSON.stringify(req.rawHeaders), raw, res });
      }
      schedule();
    });
  });
  serveBaseline(server);
}
