import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';

import { startApp, type RunningApp } from '../helpers/app.js';

import { connectSse } from '../helpers/sse.js';

import { eventually } from '../helpers/eventually.js';

import { firstAnswer, sendUntilClose } from '../helpers/exchange.js';

let server: RunningApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(base: string, source: string, body: unknown): Promise<{ id: string }> {
  const answer = await fetch(`${base}/api/webhook/${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { id: string };
}

describe('GET /api/stream', () => {
  it('sends each new delivery once, with its seq as the event id', async () => {
    server = await startApp();
    const client = await connectSse(`${server.url}/api/stream`, server.auth);
    expect(client.status).toBe(200);
    expect(client.response.headers['content-type']).toMatch(/^text\/event-stream/);
    const sent = [await post(server.url, 'a', { n: 1 }), await post(server.url, 'b', { n: 2 })];
    const events = await client.waitForEvents(2);
    expect(events.map((e) => e.event)).toEqual(['delivery', 'delivery']);
    const deliveries = events.map((e) => JSON.parse(e.data) as { id: string; seq: number; body: unknown });
    expect(deliveries.map((d) => d.id)).toEqual(sent.map((s) => s.id));
    expect(events.map((e) => Number(e.id))).toEqual(deliveries.map((d) => d.seq));
    expect(deliveries[1]?.body).toEqual({ n: 2 });
    client.close();
  });

  it('resumes after Last-Event-ID or ?after= without a gap or a repeat', async () => {
    server = await startApp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await post(server.url, 's', { i })).id);
    const first = await connectSse(`${server.url}/api/stream?after=0`, server.auth);
    const early = await first.waitForEvents(5);
    first.close();
    const resumeAfter = early[2]?.id ?? '';
    for (let i = 5; i < 8; i++) ids.push((await post(server.url, 's', { i })).id);
    const byHeader = await connectSse(`${server.url}/api/stream`, { ...server.auth, 'last-event-id': resumeAfter });
    const byQuery = await connectSse(`${server.url}/api/stream?after=${resumeAfter}`, server.auth);
    for (const client of [byHeader, byQuery]) {
      const events = await client.waitForEvents(5);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(client.events.map((e) => (JSON.parse(e.data) as { id: string }).id)).toEqual(ids.slice(3));
      expect(events.length).toBe(5);
      client.close();
    }
  });

  it('catches up while deliveries keep arriving, in order, each exactly once', async () => {
    server = await startApp();
    const base = server.url;
    const before = await Promise.all(Array.from({ length: 150 }, (_, i) => post(base, 'load', { i })));
    const during = Array.from({ length: 150 }, (_, i) => post(base, 'load', { i: 150 + i }));
    const client = await connectSse(`${base}/api/stream?after=0`, server.auth);
    const acked = [...before, ...(await Promise.all(during))];
    const events = await client.waitForEvents(300);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.events.length).toBe(300);
    const seqs = events.map((e) => Number(e.id));
    expect(seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] ?? Infinity))).toBe(true);
    const streamed = new Set(events.map((e) => (JSON.parse(e.data) as { id: string }).id));
    expect(streamed.size).toBe(300);
    for (const { id } of acked) expect(streamed.has(id)).toBe(true);
    client.close();
  });

  it('catches up on events larger than the socket takes at once by reading each from the store once', async () => {
    server = await startApp();
    const { store } = server;
    // Each event more than a socket takes before 'drain': every write leaves the page half sent.
    const big = 'x'.repeat(64 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await post(server.url, 'catchup', { i, big })).id);
    // Counts the real store's reads, and the deliveries they return (the store itself is not replaced).
    let reads = 0;
    let rowsRead = 0;
    const readAfter = store.readAfter.bind(store);
    store.readAfter = async (...args: Parameters<typeof store.readAfter>) => {
      const rows = await readAfter(...args);
      reads++;
      rowsRead += rows.length;
      return rows;
    };
    const reader = await connectSse(`${server.url}/api/stream?after=0`, server.auth);
    const events = await reader.waitForEvents(ids.length);
    expect(events.map((e) => (JSON.parse(e.data) as { id: string }).id)).toEqual(ids);
    // A page goes on after each 'drain' rather than being read again (41 reads of 820 deliveries without that).
    expect(reads).toBeLessThanOrEqual(10);
    expect(rowsRead).toBeLessThanOrEqual(2 * ids.length);
    reader.close();
  });

  it('filters by source', async () => {
    server = await startApp();
    const client = await connectSse(`${server.url}/api/stream?source=wanted`, server.auth);
    await post(server.url, 'other', { x: 1 });
    const wanted = await post(server.url, 'wanted', { x: 2 });
    const [event] = await client.waitForEvents(1);
    expect((JSON.parse(event?.data ?? '{}') as { id: string }).id).toBe(wanted.id);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.events.length).toBe(1);
    client.close();
  });

  it('follows the commits with one subscription for all its readers, and drops it when the last one leaves', async () => {
    server = await startApp();
    const { app } = server;
    const clients = await Promise.all([1, 2, 3].map(() => connectSse(`${server?.url ?? ''}/api/stream`, server?.auth)));
    await eventually(() => app.streams.size === 3);
    expect(app.feed.subscriberCount).toBe(1);
    await post(server.url, 'held', { n: 1 });
    await Promise.all(clients.map((client) => client.waitForEvents(1)));
    clients[0]?.close();
    await eventually(() => app.streams.size === 2);
    expect(app.feed.subscriberCount).toBe(1);
    for (const client of clients.slice(1)) client.close();
    await eventually(() => app.feed.subscriberCount === 0 && app.streams.size === 0);
    expect(app.streams.recentFrames).toBe(0);
  });

  it('sends a heartbeat comment', async () => {
    server = await startApp({ streamHeartbeatMs: 150 });
    const client = await connectSse(`${server.url}/api/stream`, server.auth);
    await eventually(() => client.comments.includes('heartbeat'), 2000);
    client.close();
  });

  it('disconnects a reader that stops reading, which then resumes where it was', async () => {
    server = await startApp({ streamMaxBufferedBytes: 16 * 1024, streamHeartbeatMs: 200 });
    const { app } = server;
    const serverSockets: Socket[] = [];
    app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    const stuck = await connectSse(`${server.url}/api/stream?after=0`, server.auth);
    const streamSocket = serverSockets.find((s) => s.remotePort === stuck.response.socket.localPort);
    expect(streamSocket).toBeDefined();
    stuck.response.pause();
    // Enough to fill the kernel's socket buffers on both sides, and then the server's.
    const big = 'x'.repeat(128 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push((await post(server.url, 'big', { i, big })).id);
    await eventually(() => app.streams.size === 0 && app.feed.subscriberCount === 0, 10_000);
    // Dropped with what it left unread: the server keeps none of it for a reader that may never read again.
    await eventually(() => streamSocket?.destroyed === true, 2000);
    stuck.response.resume();
    await stuck.ended;
    const received = stuck.events.map((e) => (JSON.parse(e.data) as { id: string }).id);
    expect(received.length).toBeLessThan(ids.length);
    const last = stuck.events[stuck.events.length - 1]?.id ?? '0';
    const resumed = await connectSse(`${server.url}/api/stream`, { ...server.auth, 'last-event-id': last });
    await resumed.waitForEvents(ids.length - received.length);
    const all = [...received, ...resumed.events.map((e) => (JSON.parse(e.data) as { id: string }).id)];
    expect(all).toEqual(ids);
    resumed.close();
  });

  it('disconnects a reader that takes nothing for 12 heartbeats while small events wait for it', async () => {
    server = await startApp({ streamHeartbeatMs: 50 });
    const { app } = server;
    const serverSockets: Socket[] = [];
    app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    const stuck = await connectSse(`${server.url}/api/stream`, server.auth);
    const streamSocket = serverSockets.find((s) => s.remotePort === stuck.response.socket.localPort);
    stuck.response.pause();
    // Far less than the 8 MiB buffer, but more than the sockets on both sides hold.
    const pad = 'x'.repeat(32 * 1024);
    for (let i = 0; i < 300; i++) await post(server.url, 'small', { i, pad });
    await eventually(() => app.streams.size === 0, 5000);
    await eventually(() => streamSocket?.destroyed === true, 2000);
  });

  it('keeps a reader that is taking events larger than its buffer while deliveries keep arriving', async () => {
    server = await startApp({ streamMaxBufferedBytes: 16 * 1024, streamHeartbeatMs: 200 });
    const { app } = server;
    const reader = await connectSse(`${server.url}/api/stream`, server.auth);
    // A slow link: the reader takes a chunk, then waits, so that events stay unread when commits land.
    reader.response.on('data', () => {
      reader.response.pause();
      setTimeout(() => reader.response.resume(), 5);
    });
    const big = 'x'.repeat(256 * 1024);
    const ids: string[] = [];
    for (let round = 0; round < 6; round++) {
      // Five at once, so that commits land while the reader is still taking the events before.
      const sent = await Promise.all([0, 1, 2, 3, 4].map((i) => post(server?.url ?? '', 'large', { round, i, big })));
      ids.push(...sent.map((r) => r.id));
    }
    const events = await reader.waitForEvents(ids.length);
    expect(new Set(events.map((e) => (JSON.parse(e.data) as { id: string }).id))).toEqual(new Set(ids));
    expect(app.streams.size).toBe(1);
    reader.close();
  });

  it('reads each commit from the store once for all its readers, and renders each delivery once', async () => {
    server = await startApp();
    const { app, store } = server;
    const readers = await Promise.all(
      Array.from({ length: 20 }, () => connectSse(`${server?.url ?? ''}/api/stream`, server?.auth)),
    );
    await eventually(() => app.streams.size === 20);
    // Counts the real store's reads (the store itself is not replaced).
    let reads = 0;
    const readAfter = store.readAfter.bind(store);
    store.readAfter = async (...args: Parameters<typeof store.readAfter>) => {
      reads++;
      return readAfter(...args);
    };
    for (let i = 0; i < 10; i++) await post(server.url, 'fanout', { i });
    await Promise.all(readers.map((reader) => reader.waitForEvents(10)));
    // One read per commit, not one per reader per commit (200 before).
    expect(reads).toBeLessThanOrEqual(20);
    for (const reader of readers) {
      expect(reader.events.map((e) => (JSON.parse(e.data) as { body: { i: number } }).body.i)).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
      ]);
      reader.close();
    }
  });

  it('needs the token, or the session cookie of the web page', async () => {
    server = await startApp();
    const anonymous = await connectSse(`${server.url}/api/stream`);
    expect(anonymous.status).toBe(401);
    anonymous.close();
    const login = await fetch(`${server.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: server.token }),
    });
    expect(login.status).toBe(204);
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(server.token);
    const withCookie = await connectSse(`${server.url}/api/stream`, { cookie: cookie.split(';')[0] ?? '' });
    expect(withCookie.status).toBe(200);
    withCookie.close();
    const wrong = await fetch(`${server.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'nope' }),
    });
    expect(wrong.status).toBe(401);
  });

  it('answers HEAD with the headers of the stream and no stream, and the connection goes on', async () => {
    server = await startApp();
    const head = `HEAD /api/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${server.auth.authorization}\r\n\r\n`;
    const next = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const { answer } = await sendUntilClose(server, head + next, 5000);
    const answers = answer.split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    const [stream, health] = answers.map(firstAnswer);
    expect(stream?.status).toBe(200);
    expect(stream?.contentType).toBe('text/event-stream; charset=utf-8');
    expect(stream?.body).toBe('');
    expect(health?.status).toBe(200);
  });

  it('refuses a Last-Event-ID that is not a seq', async () => {
    server = await startApp();
    const client = await connectSse(`${server.url}/api/stream`, { ...server.auth, 'last-event-id': 'abc' });
    expect(client.status).toBe(400);
    client.close();
  });

  it.each(['after=0x10', 'after=1e2', 'after=-1', 'source=..', 'source=a%2Fb', `source=${'s'.repeat(129)}`])(
    'refuses ?%s with 400 invalid_query',
    async (query) => {
      server = await startApp();
      const client = await connectSse(`${server.url}/api/stream?${query}`, server.auth);
      expect(client.status).toBe(400);
      client.close();
    },
  );
});
