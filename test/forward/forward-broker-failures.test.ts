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

import { createClient } from 'redis';

import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

/**
 * CONTRACT 7: a publish that nothing takes is a failed attempt that says so;
 * it retries like an HTTP one, ends as a dead letter, and a bulk retry sends
 * it again once the broker takes it.
 */

describe.each(STORES)('broker destinations that do not take a publish (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const start = async (destination: Record<string, unknown>): Promise<RunningApp<InboxDatabase>> => {
    server = await startForwarding(kind, {
      destinations: {
        bus: { ...destination, allowPrivateNetwork: true, retry: { attempts: 2, initialMs: 10, maxMs: 20 } },
      },
      sources: { shop: { forward: [{ to: 'bus' }] } },
    });
    return server;
  };

  /** Waits for the dead letter, checks its error, then retries every failed forward of `bus` and waits for success. */
  const deadLetterThenRetry = async (
    running: RunningApp<InboxDatabase>,
    id: string,
    error: RegExp,
    fix: () => Promise<void>,
  ): Promise<void> => {
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'failed');
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts).toHaveLength(2);
    for (const attempt of forward?.attempts ?? []) expect(attempt.error).toMatch(error);
    const listed = await api<{ items: Array<{ name: string; failed: number; lastError: string }> }>(running, '/api/destinations');
    expect(listed.json.items[0]).toMatchObject({ name: 'bus', failed: 1 });
    expect(listed.json.items[0]?.lastError).toMatch(error);
    await fix();
    const retried = await api<{ retried: number }>(running, '/api/forwards/retry', {
      method: 'POST',
      body: { status: 'failed', destination: 'bus' },
    });
    expect(retried.json).toEqual({ retried: 1 });
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
  };

  it('NATS: no stream for the subject fails and says so; with a stream, a bulk retry publishes it', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('nats', 'broker tests'))) return;
    const prefix = uniqueName('rt');
    const running = await start({ nats: { url: NATS_URL, subject: `${prefix}.{source}` } });
    const id = await send(running, 'shop', '{"n":1}');
    await deadLetterThenRetry(running, id, /^no JetStream stream takes the subject "rt\w+\.shop"/, async () => {
      const stream = await natsStream([`${prefix}.>`]);
      cleanups.push(() => stream.remove());
    });
  });

  it('RabbitMQ: a message no queue takes is returned, a failed attempt saying unroutable; bound, a bulk retry delivers it', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('amqp', 'broker tests'))) return;
    const queue = await amqpQueue('nobody.listens');
    cleanups.push(() => queue.remove());
    const running = await start({ amqp: { url: AMQP_URL, exchange: queue.exchange, routingKey: '{source}' } });
    const id = await send(running, 'shop', '{"n":1}');
    await deadLetterThenRetry(
      running,
      id,
      /^unroutable: no queue is bound to exchange "reception\.test\.\w+" for routing key "shop"/,
      async () => {
        await queue.bind('shop');
      },
    );
    const [message] = await queue.messages();
    expect(message?.properties.messageId).toBe(id);
  });

  it("RabbitMQ: an exchange that does not exist fails with the broker's reason, and the connection comes back", async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('amqp', 'broker tests'))) return;
    const missing = uniqueName('reception.test.missing.');
    const running = await start({ amqp: { url: AMQP_URL, exchange: missing, routingKey: '{source}' } });
    const id = await send(running, 'shop', '{"n":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'failed');
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts[0]?.error).toContain(`NOT_FOUND - no exchange '${missing}'`);
    await eventually(async () => {
      const list = await api<{ items: Array<{ connection: { state: string } }> }>(running, '/api/destinations');
      return list.json.items[0]?.connection.state === 'connected';
    });
  });

  it('Redis: a key of another type fails with WRONGTYPE; deleted, a bulk retry appends it', async () => {
    if (!(await storeAvailable(kind, 'broker tests')) || !(await requireBroker('redis', 'broker tests'))) return;
    const redis = await redisStreams();
    cleanups.push(() => redis.remove());
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    cleanups.push(() => client.close());
    await client.set(`${redis.prefix}shop`, 'not a stream');
    const running = await start({ redis: { url: REDIS_URL, stream: `${redis.prefix}{source}` } });
    const id = await send(running, 'shop', '{"n":1}');
    await deadLetterThenRetry(running, id, /WRONGTYPE/, async () => {
      await client.del(`${redis.prefix}shop`);
    });
    const [entry] = await redis.entries(`${redis.prefix}shop`);
    expect(entry?.fields.id?.toString()).toBe(id);
  });
});
