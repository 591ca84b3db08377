import { afterEach, describe, expect, it } from 'vitest';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
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
import { eventually } from '../helpers/eventually.js';
import { forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

/** CONTRACT 10 "Out": a broker destination publishes the transformed body, and the transform's headers join the metadata. */

const BODY = '{"type":"invoice.paid","id":"in_1","amount":5}';
const SHAPED = '{"text":"invoice.paid in_1"}';
const TRANSFORMS: ConfigFile['transforms'] = {
  slack: {
    code: 'export default (e) => ({ body: { text: `${e.eventType} ${e.body.id}` }, headers: { "x-kind": "invoice" } })',
  },
};

describe.each(STORES)('transforms on broker destinations (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const start = async (destination: Record<string, unknown>): Promise<RunningApp<InboxDatabase>> => {
    const file: ConfigFile = {
      destinations: { bus: { ...destination, allowPrivateNetwork: true, retry: { initialMs: 20, maxMs: 200 } } },
      transforms: TRANSFORMS,
      sources: { shop: { eventType: { body: 'type' }, forward: [{ to: 'bus', transform: 'slack' }] } },
    };
    server = await startForwarding(kind, file, {
      transforms: { definitions: transformDefinitions(file), users: transformUsers(file) },
    });
    return server;
  };

  const published = async (running: RunningApp<InboxDatabase>): Promise<string> => {
    const id = await send(running, 'shop', BODY, { 'content-type': 'application/vnd.shop+json' });
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts[0]?.transform?.name).toBe('slack');
    return id;
  };

  it('NATS JetStream', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('nats', 'broker tests'))) return;
    const prefix = uniqueName('rtt');
    const stream = await natsStream([`${prefix}.>`]);
    cleanups.push(() => stream.remove());
    const running = await start({ nats: { url: NATS_URL, subject: `${prefix}.{source}` } });
    const id = await published(running);
    const [message, ...rest] = await stream.messages();
    expect(rest).toEqual([]);
    expect(Buffer.from(message?.data ?? []).toString('utf8')).toBe(SHAPED);
    expect(message?.header?.get('Content-Type')).toBe('application/json');
    expect(message?.header?.get('x-kind')).toBe('invoice');
    expect(message?.header?.get('Nats-Msg-Id')).toBe(id);
  });

  it('RabbitMQ', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('amqp', 'broker tests'))) return;
    const queue = await amqpQueue('shop');
    cleanups.push(() => queue.remove());
    const running = await start({ amqp: { url: AMQP_URL, exchange: queue.exchange, routingKey: '{source}' } });
    const id = await published(running);
    const [message, ...rest] = await queue.messages();
    expect(rest).toEqual([]);
    expect(message?.content.toString('utf8')).toBe(SHAPED);
    expect(message?.properties).toMatchObject({
      messageId: id,
      contentType: 'application/json',
      headers: { 'x-kind': 'invoice', source: 'shop', eventType: 'invoice.paid' },
    });
  });

  it('Redis Streams', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('redis', 'broker tests'))) return;
    const redis = await redisStreams();
    cleanups.push(() => redis.remove());
    const running = await start({ redis: { url: REDIS_URL, stream: `${redis.prefix}{source}` } });
    const id = await published(running);
    const [entry, ...rest] = await redis.entries(`${redis.prefix}shop`);
    expect(rest).toEqual([]);
    expect(entry?.fields.body?.toString('utf8')).toBe(SHAPED);
    expect(entry?.fields.id?.toString('utf8')).toBe(id);
    expect(entry?.fields.contentType?.toString('utf8')).toBe('application/json');
    const headers = JSON.parse(entry?.fields.headers?.toString('utf8') ?? '[]') as Array<[string, string]>;
    expect(headers).toContainEqual(['x-kind', 'invoice']);
    expect(headers).toContainEqual(['content-type', 'application/json']);
    expect(headers.filter(([name]) => name.toLowerCase() === 'content-type')).toHaveLength(1);
  });
});
