import { Webhook } from 'standardwebhooks';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes!!!!').toString('base64')}`;

describe.each(STORES)('forwarding to an HTTP destination (%s)', (kind) => {
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;

  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination.close();
  });

  const start = async (
    settings: Record<string, unknown> = {},
    route: Record<string, unknown> = {},
  ): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'forwarding tests'))) return undefined;
    server = await startForwarding(kind, {
      destinations: {
        app: { url: destination.url, allowPrivateNetwork: true, retry: { initialMs: 20, maxMs: 200 }, ...settings },
      },
      sources: { shop: { forward: [{ to: 'app', ...route }] } },
    });
    return server;
  };

  it("sends the exact bytes with the original Content-Type and headers, then the contract's own, signed", async () => {
    const running = await start({ headers: { 'X-Api-Key': 'k-123' }, sign: { secrets: [SECRET] } });
    if (running === undefined) return;
    const body = '{"type":"order.created","n":12345678901234567890, "é":"\u2028"}';
    const id = await send(running, 'shop', body, {
      'X-Shop-Topic': 'orders/create',
      authorization: 'Bearer secret',
      'content-type': 'application/vnd.shop+json; charset=utf-8',
    });
    await eventually(() => destination.requests.length === 1);
    const received = destination.requests[0];
    if (received === undefined) throw new Error('nothing received');
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/hooks');
    expect(received.body.equals(Buffer.from(body))).toBe(true);
    expect(received.headers['content-type']).toBe('application/vnd.shop+json; charset=utf-8');
    expect(received.headers['x-shop-topic']).toBe('orders/create');
    expect(received.headers.authorization).toBeUndefined();
    expect(received.headers['webhook-id']).toBe(id);
    expect(received.headers['x-reception-source']).toBe('shop');
    expect(received.headers['x-reception-attempt']).toBe('1');
    expect(received.headers['x-api-key']).toBe('k-123');
    // The standardwebhooks package checks the signature over the bytes sent.
    const verified = new Webhook(SECRET).verify(received.body.toString('utf8'), {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    });
    expect(verified).toMatchObject({ type: 'order.created' });
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts).toEqual([expect.objectContaining({ n: 1, status: 204, error: null })]);
    const delivery = await api<{ forwards: unknown[] }>(running, `/api/deliveries/${id}`);
    expect(delivery.json.forwards).toEqual([{ destination: 'app', status: 'succeeded' }]);
  });

  it('retries a 503 until a 200, counting attempts in the header', async () => {
    destination.answer = (_r, n) => ({ status: n < 3 ? 503 : 200 });
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'shop', '{"a":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    expect(destination.requests.map((r) => r.headers['x-reception-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(destination.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts.map((a) => [a.n, a.status])).toEqual([
      [1, 503],
      [2, 503],
      [3, 200],
    ]);
  });

  it('gives up after its attempts: failed, then a bulk retry sends it again with a fresh budget', async () => {
    destination.answer = () => ({ status: 500 });
    const running = await start({ retry: { attempts: 2, initialMs: 10, maxMs: 20 } });
    if (running === undefined) return;
    const id = await send(running, 'shop', '{"a":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'failed');
    expect(destination.requests).toHaveLength(2);
    const list = await api<{ items: Array<{ id: string; status: string; lastError: string }> }>(
      running,
      '/api/forwards?status=failed',
    );
    const lastStartedAt = (await forwardsOf(running, id))[0]?.attempts.at(-1)?.startedAt;
    expect(lastStartedAt).toEqual(expect.any(String));
    expect(list.json.items, JSON.stringify(list.json)).toEqual([
      expect.objectContaining({ status: 'failed', lastError: 'HTTP 500', lastStatus: 500, lastAttemptAt: lastStartedAt }),
    ]);
    const destinations = await api<{ items: Array<{ name: string; failed: number; pending: number; lastError: string }> }>(
      running,
      '/api/destinations',
    );
    expect(destinations.json.items).toEqual([
      expect.objectContaining({ name: 'app', failed: 1, pending: 0, lastError: 'HTTP 500' }),
    ]);
    destination.answer = () => ({ status: 200 });
    const retried = await api<{ retried: number }>(running, '/api/forwards/retry', {
      method: 'POST',
      body: { status: 'failed', destination: 'app' },
    });
    expect(retried.json).toEqual({ retried: 1 });
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    expect(destination.requests.map((r) => r.headers['x-reception-attempt'])).toEqual(['1', '2', '3']);
    const third = (await forwardsOf(running, id))[0]?.attempts.at(-1)?.startedAt;
    expect((await api<{ items: unknown[] }>(running, '/api/forwards')).json.items).toEqual([
      expect.objectContaining({ status: 'succeeded', lastError: null, lastStatus: 200, lastAttemptAt: third }),
    ]);
    const again = await api<{ retried: number }>(running, '/api/forwards/retry', { method: 'POST', body: { status: 'failed' } });
    expect(again.json).toEqual({ retried: 0 });
  });

  it('waits as long as Retry-After says, in seconds', async () => {
    destination.answer = (_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 });
    const running = await start({ retry: { initialMs: 1, maxMs: 5000 } });
    if (running === undefined) return;
    const id = await send(running, 'shop', '{"a":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded', 10_000);
    const [first, second] = destination.requests;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('counts a destination that does not answer in time as a failed attempt', async () => {
    destination.answer = (_r, n) => (n === 1 ? 'hang' : { status: 200 });
    const running = await start({ timeoutMs: 300 });
    if (running === undefined) return;
    const id = await send(running, 'shop', '{"a":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts[0]).toMatchObject({ n: 1, status: null, error: 'timeout: no answer within 300 ms' });
  });

  it('sends a source name beyond Latin-1 percent-encoded in x-reception-source', async () => {
    if (!(await storeAvailable(kind, 'forwarding tests'))) return;
    server = await startForwarding(kind, {
      destinations: { app: { url: destination.url, allowPrivateNetwork: true } },
      sources: { 日本: { forward: [{ to: 'app' }] }, 'a b\u202e': { forward: [{ to: 'app' }] } },
    });
    const running = server;
    const first = await send(running, '日本', '{"a":1}');
    const second = await send(running, 'a b\u202e', '{"a":2}');
    await eventually(() => destination.requests.length === 2);
    expect(destination.requestsFor(first)[0]?.headers['x-reception-source']).toBe('%E6%97%A5%E6%9C%AC');
    expect(destination.requestsFor(second)[0]?.headers['x-reception-source']).toBe('a%20b%E2%80%AE');
  });

  it('forwards only what the filter matches', async () => {
    const running = await start({}, { filter: { body: { type: { $startsWith: 'invoice.' } } } });
    if (running === undefined) return;
    const skipped = await send(running, 'shop', '{"type":"customer.created"}');
    const taken = await send(running, 'shop', '{"type":"invoice.paid"}');
    await eventually(() => destination.requests.length === 1);
    expect(destination.requests[0]?.headers['webhook-id']).toBe(taken);
    expect(await forwardsOf(running, skipped)).toEqual([]);
  });
});
