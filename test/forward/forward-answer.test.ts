import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { forwardsOf, send, startForwarding, storeAvailable, STORES, type ForwardView } from '../helpers/forwarding-app.js';

/**
 * CONTRACT 6, "The destination's answer is kept" (2026-11-27): each attempt
 * keeps the answer's headers and its first 4 KiB as text, shown by
 * `GET /api/deliveries/{id}/forwards`; real HTTP on loopback, both stores.
 */

const quick = { allowPrivateNetwork: true, retry: { attempts: 1, initialMs: 10, maxMs: 20 } };

async function settled(server: RunningApp<InboxDatabase>, id: string): Promise<ForwardView> {
  await eventually(async () => ['failed', 'succeeded'].includes((await forwardsOf(server, id))[0]?.status ?? ''));
  const [forward] = await forwardsOf(server, id);
  if (forward === undefined) throw new Error('no forward');
  return forward;
}

describe.each(STORES)("the destination's answer, kept with each attempt (%s)", (kind) => {
  let destination: DestinationServer | undefined;
  let raw: Server | undefined;
  let server: RunningApp<InboxDatabase> | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination?.close();
    destination = undefined;
    raw?.closeAllConnections();
    await new Promise<void>((resolve) => (raw === undefined ? resolve() : raw.close(() => resolve())));
    raw = undefined;
  });

  async function forwardingTo(url: string, timeoutMs = 10_000): Promise<RunningApp<InboxDatabase>> {
    server = await startForwarding(kind, {
      destinations: { app: { url, timeoutMs, ...quick } },
      sources: { shop: { forward: [{ to: 'app' }] } },
    });
    return server;
  }

  it('keeps a 500 with a JSON body: its status, headers in order, and the whole body', async () => {
    if (!(await storeAvailable(kind, 'forward answer tests'))) return;
    destination = new DestinationServer();
    await destination.listen();
    destination.answer = () => ({
      status: 500,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'req-42' },
      body: '{"error":"database unavailable"}',
    });
    const running = await forwardingTo(destination.url);
    const forward = await settled(running, await send(running, 'shop', '{"a":1}'));
    expect(forward.status).toBe('failed');
    const [attempt] = forward.attempts;
    expect(attempt?.status).toBe(500);
    expect(attempt?.response?.body).toBe('{"error":"database unavailable"}');
    expect(attempt?.response?.bodyTruncated).toBe(false);
    const headers = attempt?.response?.headers ?? [];
    expect(headers.slice(0, 2)).toEqual([
      ['Content-Type', 'application/json'],
      ['X-Request-Id', 'req-42'],
    ]);
  });

  it('keeps the first 4 KiB of a 100 KiB answer, marked truncated, and keeps a 2xx answer too', async () => {
    if (!(await storeAvailable(kind, 'forward answer tests'))) return;
    destination = new DestinationServer();
    await destination.listen();
    const big = 'abcdefghijklmnop'.repeat(6400); // 100 KiB
    destination.answer = () => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: big });
    const running = await forwardingTo(destination.url);
    const forward = await settled(running, await send(running, 'shop', '{"a":1}'));
    expect(forward.status).toBe('succeeded');
    const response = forward.attempts[0]?.response;
    expect(response?.body).toBe(big.slice(0, 4096));
    expect(response?.bodyTruncated).toBe(true);
  });

  it('replaces invalid UTF-8 in the body and leaves out a character cut at 4 KiB', async () => {
    if (!(await storeAvailable(kind, 'forward answer tests'))) return;
    destination = new DestinationServer();
    await destination.listen();
    const invalid = Buffer.concat([Buffer.from('bad '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' end é')]);
    // 4095 ASCII bytes, then "é" (2 bytes): its first byte is the 4096th.
    const cut = Buffer.concat([Buffer.from('x'.repeat(4095)), Buffer.from('é'.repeat(10))]);
    destination.answer = (_request, n) => ({ status: 422, body: n === 1 ? invalid : cut });
    const running = await forwardingTo(destination.url);
    const first = await settled(running, await send(running, 'shop', '{"a":1}'));
    expect(first.attempts[0]?.response?.body).toBe('bad \uFFFD\uFFFD\uFFFD end é');
    const second = await settled(running, await send(running, 'shop', '{"a":2}'));
    expect(second.attempts[0]?.response).toMatchObject({ body: 'x'.repeat(4095), bodyTruncated: true });
  });

  it('does not wait for an endless body: the attempt ends once 4 KiB came', async () => {
    if (!(await storeAvailable(kind, 'forward answer tests'))) return;
    // Sends 64 KiB every 10 ms for as long as the connection stays open: a "1 GB" answer.
    raw = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(503, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 0x41);
        const timer = setInterval(() => res.write(chunk), 10);
        res.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((resolve) => raw?.listen(0, '127.0.0.1', resolve));
    const port = (raw.address() as AddressInfo).port;
    const running = await forwardingTo(`http://127.0.0.1:${port}/hooks`, 20_000);
    const started = Date.now();
    const forward = await settled(running, await send(running, 'shop', '{"a":1}'));
    expect(Date.now() - started).toBeLessThan(5000);
    const [attempt] = forward.attempts;
    expect(attempt?.status).toBe(503);
    expect(attempt?.durationMs).toBeLessThan(5000);
    expect(attempt?.response).toMatchObject({ body: 'A'.repeat(4096), bodyTruncated: true });
  });

  it('keeps what came of a body that trickles until the timeout', async () => {
    if (!(await storeAvailable(kind, 'forward answer tests'))) return;
    raw = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.write('partial');
      });
    });
    await new Promise<void>((resolve) => raw?.listen(0, '127.0.0.1', resolve));
    const port = (raw.address() as AddressInfo).port;
    const running = await forwardingTo(`http://127.0.0.1:${port}/hooks`, 500);
    const forward = await settled(running, await send(running, 'shop', '{"a":1}'));
    const [attempt] = forward.attempts;
    expect(attempt?.status).toBe(500);
    expect(attempt?.response).toMatchObject({ body: 'partial', bodyTruncated: true });
    expect(attempt?.durationMs).toBeLessThan(3000);
  });

  it('keeps no answer (null) for a timeout or a refused connection', async () => {
    if (!(await storeAvailable(kind, 'forward answer tests'))) return;
    destination = new DestinationServer();
    await destination.listen();
    destination.answer = () => 'hang';
    const running = await forwardingTo(destination.url, 300);
    const timedOut = await settled(running, await send(running, 'shop', '{"a":1}'));
    expect(timedOut.attempts[0]?.error).toMatch(/^timeout/);
    expect(timedOut.attempts[0]?.response).toBeNull();
    const port = destination.port;
    await destination.close();
    destination = undefined;
    await running.close();
    const refusedTo = await forwardingTo(`http://127.0.0.1:${port}/hooks`);
    const refused = await settled(refusedTo, await send(refusedTo, 'shop', '{"a":1}'));
    expect(refused.attempts[0]?.error).toMatch(/ECONNREFUSED/);
    expect(refused.attempts[0]?.response).toBeNull();
  });
});
