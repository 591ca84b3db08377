import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { ownNatsServer, ownRedisServer } from '../helpers/broker-processes.js';

import { amqpQueue, natsStream, redisStreams, requireBroker, uniqueName } from '../helpers/brokers.js';

import { startTcpProxy } from '../helpers/tcp-proxy.js';

import { api, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

/**
 * CONTRACT 7: a broker that goes away while deliveries arrive turns into
 * failed attempts that retry, never a crash or a lost forward: every
 * acknowledged delivery is published at least once, and on JetStream (whose
 * duplicate window drops a repeated Nats-Msg-Id) exactly once.
 *
 * NATS and Redis: a server of the test's own on a free port, stopped and
 * started again. RabbitMQ: a private node is heavy, so a TCP proxy in front
 * of the shared one is cut (connections reset, port closed) and restored.
 */

interface DestinationRow {
  pending: number;
  failed: number;
  connection: { state: string; lastError: string | null } | null;
}

describe.each(STORES)('a broker that goes down and comes back while deliveries arrive (%s)', { timeout: 90_000 }, (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const start = async (destination: Record<string, unknown>): Promise<RunningApp<InboxDatabase>> => {
    server = await startForwarding(kind, {
      destinations: {
        bus: {
          ...destination,
          allowPrivateNetwork: true,
          timeoutMs: 2000,
          retry: { attempts: 1000, initialMs: 50, maxMs: 300 },
          // The outage opens the circuit (docs/circuits.md): a short cooldown, so that the probes find the broker back soon.
          breaker: { cooldownSeconds: 0.5 },
        },
      },
      sources: { shop: { forward: [{ to: 'bus' }] } },
    });
    return server;
  };

  const row = async (running: RunningApp<InboxDatabase>): Promise<DestinationRow> => {
    const list = await api<{ items: DestinationRow[] }>(running, '/api/destinations');
    const first = list.json.items[0];
    if (first === undefined) throw new Error('no destination listed');
    return first;
  };

  /**
   * Sends deliveries one after another (20 ms apart) all along; the broker
   * goes down once 10 were answered, and comes back once 10 more were
   * answered while it was down; sending stops 10 later. Counted rather than
   * timed, so that a slow machine changes nothing. Answers the ids of the
   * deliveries answered 200, once every forward is settled.
   */
  const outage = async (
    running: RunningApp<InboxDatabase>,
    down: () => Promise<void>,
    up: () => Promise<void>,
  ): Promise<string[]> => {
    const ids: string[] = [];
    let sending = true;
    const sender = (async () => {
      while (sending) {
        ids.push(await send(running, 'shop', JSON.stringify({ type: 'order.created', n: ids.length })));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const sentAtLeast = (n: number): Promise<void> => eventually(() => ids.length >= n, 30_000);
    try {
      await sentAtLeast(10);
      await down();
      await eventually(async () => (await row(running)).connection?.state === 'disconnected', 10_000);
      const during = await row(running);
      expect(during.connection?.lastError).not.toBeNull();
      // Readiness is about the inbox, which still takes deliveries.
      expect((await fetch(`${running.url}/readyz`)).status).toBe(200);
      await sentAtLeast(ids.length + 10);
      await up();
      await sentAtLeast(ids.length + 10);
    } finally {
      sending = false;
      await sender;
    }
    await eventually(async () => (await row(running)).pending === 0, 30_000);
    const after = await row(running);
    expect(after).toMatchObject({ failed: 0, connection: { state: 'connected' } });
    const retried = await api<{ items: Array<{ attemptCount: number }> }>(running, '/api/forwards?destination=bus&limit=500');
    // The outage was seen: some forwards needed more than one attempt.
    expect(retried.json.items.some((f) => f.attemptCount > 1)).toBe(true);
    return ids;
  };

  it('NATS JetStream (its own nats-server, restarted): every delivery exactly once', async () => {
    if (!(await storeAvailable(kind, 'broker outage tests'))) return;
    const nats = await ownNatsServer();
    cleanups.push(() => nats.remove());
    const prefix = uniqueName('rt');
    const stream = await natsStream([`${prefix}.>`], nats.url);
    cleanups.push(() => stream.remove());
    const running = await start({ nats: { url: nats.url, subject: `${prefix}.{source}` } });
    const ids = await outage(running, nats.stop, nats.start);
    const published = (await stream.messages()).map((m) => m.header?.get('Nats-Msg-Id'));
    expect(published.length).toBe(ids.length);
    expect([...published].sort()).toEqual([...ids].sort());
  });

  it('RabbitMQ (a TCP proxy in front of the shared broker, cut and restored): every delivery at least once', async () => {
    if (!(await storeAvailable(kind, 'broker outage tests')) || !(await requireBroker('amqp', 'broker outage tests'))) return;
    const queue = await amqpQueue('#');
    cleanups.push(() => queue.remove());
    const proxy = await startTcpProxy('127.0.0.1', 5672);
    cleanups.push(() => proxy.close());
    const running = await start({
      amqp: { url: `amqp://guest:guest@127.0.0.1:${proxy.port}`, exchange: queue.exchange, routingKey: '{source}' },
    });
    const ids = await outage(running, proxy.cut, proxy.restore);
    const published = new Set((await queue.messages()).map((m) => String(m.properties.messageId)));
    for (const id of ids) expect(published.has(id), id).toBe(true);
  });

  it('Redis Streams (its own redis-server, restarted): every delivery at least once', async () => {
    if (!(await storeAvailable(kind, 'broker outage tests'))) return;
    const redisServer = await ownRedisServer();
    cleanups.push(() => redisServer.remove());
    const running = await start({ redis: { url: redisServer.url, stream: 'webhooks:{source}' } });
    const ids = await outage(running, redisServer.stop, redisServer.start);
    const redis = await redisStreams(redisServer.url);
    cleanups.push(() => redis.remove());
    const published = new Set((await redis.entries('webhooks:shop')).map((e) => e.fields.id?.toString()));
    for (const id of ids) expect(published.has(id), id).toBe(true);
  });
});
