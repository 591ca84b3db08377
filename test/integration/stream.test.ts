import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { connectSse } from '../helpers/sse.js';

let server: RunningApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(base: string, source: string, body: unknown): Promise<{ id: string }> {
  const answer = await fetch(`${base}/api/webhook/${source}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  expect(answer.status).toBe(200);
  return await answer.json() as { id: string };
}

async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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
    const acked = [...before, ...await Promise.all(during)];
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

  it('removes the subscription when the client disconnects', async () => {
    server = await startApp();
    const { app } = server;
    const clients = await Promise.all([1, 2, 3].map(() => connectSse(`${server?.url ?? ''}/api/stream`, server?.auth)));
    await eventually(() => app.feed.subscriberCount === 3 && app.streams.size === 3);
    for (const client of clients) client.close();
    await eventually(() => app.feed.subscriberCount === 0 && app.streams.size === 0);
    expect(app.feed.subscriberCount).toBe(0);
  });

  it('sends a heartbeat comment', async () => {
    server = await startApp({ streamHeartbeatMs: 150 });
    const client = await connectSse(`${server.url}/api/stream`, server.auth);
    await eventually(() => client.comments.includes('heartbeat'), 2000);
    client.close();
  });

  it('disconnects a reader that stops reading, which then resumes where it was', async () => {
    server = await startApp({ streamMaxBufferedBytes: 16 * 1024 });
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

  it('needs the token, or the session cookie of the web page', async () => {
    server = await startApp();
    const anonymous = await connectSse(`${server.url}/api/stream`);
    expect(anonymous.status).toBe(401);
    anonymous.close();
    const login = await fetch(`${server.url}/api/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: server.token }),
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
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'nope' }),
    });
    expect(wrong.status).toBe(401);
  });

  it('refuses a Last-Event-ID that is not a seq', async () => {
    server = await startApp();
    const client = await connectSse(`${server.url}/api/stream`, { ...server.auth, 'last-event-id': 'abc' });
    expect(client.status).toBe(400);
    client.close();
  });
});
