import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Database } from '../../src/platform/db/sqlite/driver.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { startAppOnSqlite, startAppOn, type RunningApp } from '../helpers/app.js';
import { tempDir } from '../helpers/temp-dir.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const running: Array<RunningApp<SqliteStore>> = [];
const lockers: Database[] = [];

async function start(overrides: Parameters<typeof startAppOnSqlite>[0] = {}): Promise<RunningApp<SqliteStore>> {
  const server = await startAppOnSqlite(overrides);
  running.push(server);
  return server;
}

/**
 * Takes the SQLite write lock from another connection, as a backup tool or
 * a second process would, and keeps it until `release()`.
 */
function holdWriteLock(server: RunningApp): { release: () => void } {
  const locker = new Database(join(server.dataDir, 'reception.sqlite'));
  lockers.push(locker);
  locker.exec('BEGIN EXCLUSIVE');
  return { release: () => locker.exec('ROLLBACK') };
}

const dirs: Array<ReturnType<typeof tempDir>> = [];

afterEach(async () => {
  for (const locker of lockers.splice(0)) locker.close();
  for (const server of running.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) dir.remove();
});

/**
 * SQLite's own "database or disk is full" (SQLITE_FULL) on the store's
 * connection: the file may not grow by a single page from now on.
 */
function fillDisk(store: SqliteStore): void {
  const pages = store.db.pragma('page_count', { simple: true }) as number;
  store.db.pragma(`max_page_count = ${pages}`);
}

function makeRoom(store: SqliteStore): void {
  store.db.pragma('max_page_count = 1073741823');
}

/** Polls `/readyz` until it answers `status` (it may answer from a result up to a second old). */
async function readyzBecomes(server: RunningApp<SqliteStore>, status: number): Promise<Response> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const answer = await fetch(`${server.url}/readyz`);
    if (answer.status === status || Date.now() > deadline) {
      expect(answer.status).toBe(status);
      return answer;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function post(server: RunningApp, source: string, body: object): Promise<Response> {
  return fetch(`${server.url}/api/webhook/${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function storedBodies(server: RunningApp): Promise<unknown[]> {
  const answer = await fetch(`${server.url}/api/deliveries?limit=500`, { headers: server.auth });
  expect(answer.status).toBe(200);
  const page = (await answer.json()) as { items: Array<{ body: unknown }> };
  return page.items.map((item) => item.body);
}

async function expectStorageUnavailable(answer: Response): Promise<void> {
  expect(answer.status).toBe(503);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  const problem = (await answer.json()) as Record<string, unknown>;
  expect(problem).toMatchObject({ status: 503, code: 'storage_unavailable' });
  expect(typeof problem.title).toBe('string');
  expect(JSON.stringify(problem)).not.toMatch(/SQLITE|sqlite|\/tmp|at .*\.ts/);
}

/** Connects now; `send` writes a whole request at once and resolves with the answer. */
async function openConnection(server: RunningApp): Promise<{ send: (path: string, body: string) => Promise<RawAnswer> }> {
  const { port } = new URL(server.url);
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  return {
    send: (path, body) =>
      new Promise((resolve, reject) => {
        let received = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          received += chunk;
        });
        socket.once('error', reject);
        socket.once('end', () => {
          const [head = '', ...rest] = received.split('\r\n\r\n');
          const [statusLine = '', ...lines] = head.split('\r\n');
          const headers: Record<string, string> = {};
          for (const line of lines) {
            const colon = line.indexOf(':');
            headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
          }
          resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
        });
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }),
  };
}

describe('when the store cannot take writes', () => {
  it('answers 503 storage_unavailable with Retry-After while the file is locked, and 200 once it is free', async () => {
    const server = await start();
    const earlier: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await post(server, 'orders', { earlier: i });
      expect(answer.status).toBe(200);
      earlier.push(((await answer.json()) as { id: string }).id);
    }

    const lock = holdWriteLock(server);
    await expectStorageUnavailable(await post(server, 'orders', { refused: 'alone' }));
    const together = await Promise.all([0, 1, 2].map((i) => post(server, `other-${i}`, { refused: i })));
    for (const answer of together) await expectStorageUnavailable(answer);
    lock.release();

    const after = await post(server, 'orders', { after: true });
    expect(after.status).toBe(200);
    const { id } = (await after.json()) as { id: string };
    for (const earlierId of [...earlier, id]) {
      expect((await fetch(`${server.url}/api/deliveries/${earlierId}`, { headers: server.auth })).status).toBe(200);
    }
    const bodies = await storedBodies(server);
    expect(bodies).toEqual([{ after: true }, { earlier: 2 }, { earlier: 1 }, { earlier: 0 }]);
  });

  it('answers /readyz 503 while the file is locked and 200 once it is free', async () => {
    const server = await start();
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const lock = holdWriteLock(server);
    const locked = await readyzBecomes(server, 503);
    expect(locked.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    lock.release();
    const free = await readyzBecomes(server, 200);
    expect(await free.json()).toMatchObject({ status: 'ready', store: 'sqlite' });
  });

  it('answers /readyz 503 when the disk is full, and 200 once there is room again', async () => {
    const server = await start();
    expect((await post(server, 'orders', { before: true })).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    fillDisk(server.store);
    const full = await readyzBecomes(server, 503);
    expect(full.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await full.json()).toEqual({ status: 'unavailable', store: 'sqlite' });
    await expectStorageUnavailable(await post(server, 'orders', { padding: 'x'.repeat(64 * 1024) }));
    makeRoom(server.store);
    await readyzBecomes(server, 200);
    expect((await post(server, 'orders', { after: true })).status).toBe(200);
  });

  it('answers /readyz 503 from its first call after a restart on a full disk', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir.path, 'reception.sqlite');
    const before = await startAppOn(new SqliteStore({ file, durability: 'full' }));
    for (let i = 0; i < 3; i++) expect((await post(before, 'orders', { i })).status).toBe(200);
    fillDisk(before.store);
    await readyzBecomes(before, 503);
    await before.close();

    // The same file, still on a full disk: the new connection may not grow it either.
    const store = new SqliteStore({ file, durability: 'full' });
    fillDisk(store);
    const after = await startAppOn(store);
    running.push(after);
    const first = await fetch(`${after.url}/readyz`);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    makeRoom(store);
    await readyzBecomes(after, 200);
    expect(await storedBodies(after)).toEqual([{ i: 2 }, { i: 1 }, { i: 0 }]);
  });

  it('answers DELETE /api/deliveries/{id} 503 storage_unavailable with Retry-After while the file is locked, and deletes it once it is free', async () => {
    const server = await start();
    const { id } = (await (await post(server, 'orders', { doomed: true })).json()) as { id: string };
    const lock = holdWriteLock(server);
    await expectStorageUnavailable(await fetch(`${server.url}/api/deliveries/${id}`, { method: 'DELETE', headers: server.auth }));
    lock.release();
    expect((await fetch(`${server.url}/api/deliveries/${id}`, { headers: server.auth })).status).toBe(200);
    expect((await fetch(`${server.url}/api/deliveries/${id}`, { method: 'DELETE', headers: server.auth })).status).toBe(204);
  });

  it('answers 503 storage_unavailable with Retry-After when the disk is full, keeps what it had, and takes writes again once there is room', async () => {
    const server = await start();
    expect((await post(server, 'orders', { before: true })).status).toBe(200);
    // SQLite's own "database or disk is full" (SQLITE_FULL): the file may not grow by a page.
    const pages = server.store.db.pragma('page_count', { simple: true }) as number;
    server.store.db.pragma(`max_page_count = ${pages}`);
    const big = { padding: 'x'.repeat(64 * 1024) };
    await expectStorageUnavailable(await post(server, 'orders', big));
    await expectStorageUnavailable(await post(server, 'orders', { ...big, again: true }));
    expect(await storedBodies(server)).toEqual([{ before: true }]);

    server.store.db.pragma('max_page_count = 1073741823');
    expect((await post(server, 'orders', { after: true })).status).toBe(200);
    expect(await storedBodies(server)).toEqual([{ after: true }, { before: true }]);
  });

  it('keeps the inbox readable while writes are refused', async () => {
    const server = await start();
    expect((await post(server, 'orders', { kept: true })).status).toBe(200);
    const lock = holdWriteLock(server);
    expect(await storedBodies(server)).toEqual([{ kept: true }]);
    lock.release();
  });
});

/** Two idle connections that the server has accepted, so that what is sent on them next is read in one turn. */
async function twoAcceptedConnections(server: RunningApp): Promise<Array<Awaited<ReturnType<typeof openConnection>>>> {
  const connections = await Promise.all([openConnection(server), openConnection(server)]);
  const accepted = (): Promise<number> =>
    new Promise((resolve, reject) => {
      server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count)));
    });
  for (let i = 0; i < 200 && (await accepted()) < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return connections;
}

describe('when the write queue is full', () => {
  it('refuses what does not fit with 503 storage_unavailable and Retry-After, and stores the rest', async () => {
    const server = await start({ queueMaxPending: 1 });
    const [a, b] = await twoAcceptedConnections(server);
    if (a === undefined || b === undefined) throw new Error('no connection');
    // Both requests reach the server in the same loop turn: one waits for the commit, the other finds no room.
    const answers = await Promise.all([a.send('/api/webhook/burst', '{"n":1}'), b.send('/api/webhook/burst', '{"n":2}')]);
    expect(answers.map((x) => x.status).sort()).toEqual([200, 503]);
    const refused = answers.find((x) => x.status === 503);
    expect(refused?.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused?.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(JSON.parse(refused?.body ?? '{}')).toMatchObject({ code: 'storage_unavailable', status: 503 });
    expect(await storedBodies(server)).toHaveLength(1);
  });

  it('refuses at the queue, without a commit, while a locked store holds the queue', async () => {
    const server = await start({ queueMaxPending: 1 });
    const [a, b] = await twoAcceptedConnections(server);
    if (a === undefined || b === undefined) throw new Error('no connection');
    const lock = holdWriteLock(server);
    const answers = await Promise.all([a.send('/api/webhook/burst', '{"n":1}'), b.send('/api/webhook/burst', '{"n":2}')]);
    lock.release();
    expect(answers.map((x) => x.status)).toEqual([503, 503]);
    for (const answer of answers) expect(JSON.parse(answer.body)).toMatchObject({ code: 'storage_unavailable' });
    // Only one delivery reached a (failed) commit: the other was refused by the full queue.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^reception_commit_batch_size_count 1$/m);
    expect(metrics).toMatch(/^reception_commit_duration_seconds_count\{result="error"\} 1$/m);
    expect(await storedBodies(server)).toEqual([]);
  });
});
