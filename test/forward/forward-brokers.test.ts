import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import {
  AMQP_URL,
  amqpQueue,
  NATS_URL,
  natsStream,
  REDIS_URL,
  redisStreams,
  requireBroker,
  uniqueName,
} from '../helpers/brokers.js';

import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

/** CONTRACT 7: what each broker receives, byte for byte, against the machine's real brokers, on both stores. */

const BODY = '{"type":"invoice.paid","n":12345678901234567890, "é":"\u2028"}';
const CONTENT_TYPE = 'application/vnd.shop+json; charset=utf-8';
const HEADERS = { 'content-type': CONTENT_TYPE, 'X-Shop-Topic': 'orders/create', authorization: 'Bearer secret' };

interface DeliveryView {
  id: string;
  receivedAt: string;
}

describe.each(STORES)('publishing to brokers (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const start = async (destination: Record<string, unknown>, sources = ['shop']): Promise<RunningApp<InboxDatabase>> => {
    server = await startForwarding(kind, {
      destinations: { bus: { ...destination, allowPrivateNetwork: true, retry: { initialMs: 20, maxMs: 200 } } },
      sources: Object.fromEntries(sources.map((name) => [name, { forward: [{ to: 'bus' }] }])),
    });
    return server;
  };

  const delivered = async (running: RunningApp<InboxDatabase>, id: string): Promise<DeliveryView> => {
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts).toEqual([expect.objectContaining({ n: 1, status: null, error: null })]);
    return (await api<DeliveryView>(running, `/api/deliveries/${id}`)).json;
  };

  it('NATS JetStream: the raw bytes on the subject, Nats-Msg-Id and the Reception-* headers; the connection shown', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('nats', 'broker tests'))) return;
    const prefix = uniqueName('rt');
    const stream = await natsStream([`${prefix}.>`]);
    cleanups.push(() => stream.remove());
    const running = await start({ nats: { url: NATS_URL, subject: `${prefix}.{source}.{eventType}` } }, ['shop', 'a b.c*']);
    const delivery = await delivered(running, await send(running, 'shop', BODY, HEADERS));
    const other = await delivered(running, await send(running, 'a b.c*', '{"n":1}'));
    const [first, second] = await stream.messages();
    expect(first?.subject).toBe(`${prefix}.shop.invoice.paid`);
    expect(Buffer.from(first?.data ?? []).equals(Buffer.from(BODY))).toBe(true);
    expect(first?.header?.get('Nats-Msg-Id')).toBe(delivery.id);
    expect(first?.header?.get('Reception-Source')).toBe('shop');
    expect(first?.header?.get('Reception-Event-Type')).toBe('invoice.paid');
    expect(first?.header?.get('Reception-Received-At')).toBe(delivery.receivedAt);
    expect(first?.header?.get('Content-Type')).toBe(CONTENT_TYPE);
    // A "." in a value stays a token separator; "*" and white space become "_"; no event type is "none".
    expect(second?.subject).toBe(`${prefix}.a_b.c_.none`);
    expect(second?.header?.get('Nats-Msg-Id')).toBe(other.id);
    expect(second?.header?.get('Reception-Source')).toBe('a%20b.c*');
    expect(second?.header?.get('Reception-Event-Type')).toBe('');
    // Sent again (a new forward of the same delivery): JetStream's duplicate window drops the repeated Nats-Msg-Id.
    const again = await api<{ id: string }>(running, `/api/deliveries/${delivery.id}/forward`, {
      method: 'POST',
      body: { destination: 'bus' },
    });
    expect(again.status).toBe(201);
    await eventually(async () => (await forwardsOf(running, delivery.id)).every((f) => f.status === 'succeeded'));
    expect(await stream.count()).toBe(2);
    const list = await api<{ items: Array<Record<string, unknown>> }>(running, '/api/destinations');
    expect(list.json.items).toEqual([
      expect.objectContaining({
        name: 'bus',
        kind: 'nats',
        url: 'nats://127.0.0.1:4222',
        connection: { state: 'connected', lastError: null, since: expect.any(String) },
      }),
    ]);
  });

  it('RabbitMQ: a persistent message on the exchange with messageId, contentType, timestamp and the headers', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('amqp', 'broker tests'))) return;
    // Bound as a consumer binds an event type's family: the event type's dots are the routing key's words.
    const queue = await amqpQueue('shop.invoice.*');
    cleanups.push(() => queue.remove());
    const running = await start({ amqp: { url: AMQP_URL, exchange: queue.exchange, routingKey: '{source}.{eventType}' } });
    const delivery = await delivered(running, await send(running, 'shop', BODY, HEADERS));
    const [message, ...rest] = await queue.messages();
    expect(rest).toEqual([]);
    expect(message?.content.equals(Buffer.from(BODY))).toBe(true);
    expect(message?.fields.exchange).toBe(queue.exchange);
    expect(message?.fields.routingKey).toBe('shop.invoice.paid');
    expect(message?.properties).toMatchObject({
      messageId: delivery.id,
      contentType: CONTENT_TYPE,
      deliveryMode: 2,
      timestamp: Math.floor(Date.parse(delivery.receivedAt) / 1000),
      headers: { source: 'shop', eventType: 'invoice.paid', receivedAt: delivery.receivedAt },
    });
    const list = await api<{ items: Array<Record<string, unknown>> }>(running, '/api/destinations');
    // The API never shows the URL's user and password.
    expect(list.json.items[0]).toMatchObject({ kind: 'amqp', url: 'amqp://127.0.0.1:5672', connection: { state: 'connected' } });
    expect(JSON.stringify(list.json)).not.toContain('guest');
  });

  it('Redis Streams: XADD of the raw bytes and the fields', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('redis', 'broker tests'))) return;
    const redis = await redisStreams();
    cleanups.push(() => redis.remove());
    const running = await start({ redis: { url: REDIS_URL, stream: `${redis.prefix}{source}`, maxLen: 1000 } });
    const delivery = await delivered(running, await send(running, 'shop', BODY, HEADERS));
    const [entry, ...rest] = await redis.entries(`${redis.prefix}shop`);
    expect(rest).toEqual([]);
    const fields = Object.fromEntries(Object.entries(entry?.fields ?? {}).map(([name, value]) => [name, value.toString('utf8')]));
    expect(Object.keys(fields)).toEqual(['id', 'source', 'eventType', 'receivedAt', 'contentType', 'headers', 'body']);
    expect(entry?.fields.body?.equals(Buffer.from(BODY))).toBe(true);
    expect(fields).toMatchObject({
      id: delivery.id,
      source: 'shop',
      eventType: 'invoice.paid',
      receivedAt: delivery.receivedAt,
      contentType: CONTENT_TYPE,
    });
    const headers = JSON.parse(fields.headers ?? '[]') as Array<[string, string]>;
    expect(headers).toContainEqual(['X-Shop-Topic', 'orders/create']);
    // The redacted headers are not passed on, as over HTTP.
    expect(headers.map(([name]) => name.toLowerCase())).not.toContain('authorization');
    const list = await api<{ items: Array<Record<string, unknown>> }>(running, '/api/destinations');
    expect(list.json.items[0]).toMatchObject({
      kind: 'redis',
      url: 'redis://127.0.0.1:6379',
      connection: { state: 'connected' },
    });
  });
});
