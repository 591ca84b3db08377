import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { amqpQueue, natsStream, redisStreams, requireBroker, uniqueName, type BrokerName } from '../helpers/brokers.js';

import { capturingLogger } from '../helpers/log-capture.js';

import { api, forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

/**
 * CONTRACT 6 and 7 for brokers: the private-network guard holds for a
 * broker's host (the machine's brokers are on loopback, so without
 * `allowPrivateNetwork: true` nothing is ever published), and a password in
 * a broker URL is never logged nor shown.
 */

interface Listed {
  items: Array<{ lastError: string | null; connection: { state: string; lastError: string | null } | null }>;
}

describe('broker destinations: the private-network guard and the URL password', () => {
  let server: RunningApp<InboxDatabase> | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** A destination on each broker, at `host`, and what the broker holds of what was published to it. */
  const targets: Record<
    BrokerName,
    (host: string) => Promise<{ settings: Record<string, unknown>; published: () => Promise<number> }>
  > = {
    nats: async (host) => {
      const prefix = uniqueName('rt');
      const stream = await natsStream([`${prefix}.>`]);
      cleanups.push(() => stream.remove());
      return {
        settings: { nats: { url: `nats://${host}:4222`, subject: `${prefix}.{source}` } },
        published: () => stream.count(),
      };
    },
    amqp: async (host) => {
      const queue = await amqpQueue('#');
      cleanups.push(() => queue.remove());
      return {
        settings: { amqp: { url: `amqp://guest:guest@${host}:5672`, exchange: queue.exchange, routingKey: '{source}' } },
        published: () => queue.count(),
      };
    },
    redis: async (host) => {
      const redis = await redisStreams();
      cleanups.push(() => redis.remove());
      return {
        settings: { redis: { url: `redis://${host}:6379`, stream: `${redis.prefix}{source}` } },
        published: async () => (await redis.entries(`${redis.prefix}shop`)).length,
      };
    },
  };

  for (const broker of ['nats', 'amqp', 'redis'] as const) {
    it.each([
      ['the loopback address', '127.0.0.1'],
      ['a name that resolves to loopback', 'localhost'],
    ])(
      `${broker}: refuses %s without allowPrivateNetwork, publishing nothing, failed after one attempt, saying which setting allows it`,
      async (_what, host) => {
        if (!(await requireBroker(broker, 'broker guard tests'))) return;
        const target = await targets[broker](host);
        // A budget of 12 attempts over minutes: the refusal must not spend it (CONTRACT 6, 2026-11-27).
        server = await startForwarding('sqlite', {
          destinations: { bus: { ...target.settings, retry: { attempts: 12, initialMs: 60_000, maxMs: 60_000 } } },
          sources: { shop: { forward: [{ to: 'bus' }] } },
        });
        const running = server;
        const id = await send(running, 'shop', '{"a":1}');
        await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'failed');
        const [forward] = await forwardsOf(running, id);
        expect(forward?.attempts).toHaveLength(1);
        for (const attempt of forward?.attempts ?? []) {
          expect(attempt.response).toBeNull();
          expect(attempt.error).toMatch(/destination_not_allowed: .*set allowPrivateNetwork: true/);
          expect(attempt.error).toContain(host);
        }
        const listed = await api<Listed>(running, '/api/destinations');
        // Between tries it is disconnected, during one connecting: never connected.
        expect(listed.json.items[0]?.connection).toMatchObject({
          state: expect.stringMatching(/^(disconnected|connecting)$/),
          lastError: expect.stringMatching(/^destination_not_allowed/),
        });
        expect(await target.published()).toBe(0);
      },
    );
  }

  it('never logs nor shows the password of a broker URL, whether the broker takes it or refuses it', async () => {
    if (!(await requireBroker('amqp', 'broker tests')) || !(await requireBroker('nats', 'broker tests'))) return;
    if (!(await requireBroker('redis', 'broker tests'))) return;
    const password = 's3cret-pa%24%24word';
    const { logger, lines } = capturingLogger();
    const redis = await redisStreams();
    cleanups.push(() => redis.remove());
    const quick = { allowPrivateNetwork: true, retry: { attempts: 3, initialMs: 10, maxMs: 50 } };
    server = await startForwarding(
      'sqlite',
      {
        destinations: {
          // RabbitMQ refuses guest with this password; Redis's default user and this NATS server take any.
          rabbit: { amqp: { url: `amqp://guest:${password}@127.0.0.1:5672`, exchange: 'x', routingKey: 'k' }, ...quick },
          stream: { redis: { url: `redis://default:${password}@127.0.0.1:6379`, stream: `${redis.prefix}s` }, ...quick },
          bus: { nats: { url: `nats://someone:${password}@127.0.0.1:4222`, subject: uniqueName('nostream') }, ...quick },
        },
        sources: { shop: { forward: [{ to: 'rabbit' }, { to: 'stream' }, { to: 'bus' }] } },
      },
      { logger },
    );
    const running = server;
    const id = await send(running, 'shop', '{"a":1}');
    await eventually(async () => (await forwardsOf(running, id)).every((f) => f.status === 'failed' || f.status === 'succeeded'));
    const listed = await api<Listed>(running, '/api/destinations');
    // RabbitMQ's is never connected: between tries disconnected, during one connecting.
    expect(listed.json.items.map((item) => item.connection?.state)).toEqual([
      'connected',
      expect.stringMatching(/^(disconnected|connecting)$/),
      'connected',
    ]);
    const shown = [
      JSON.stringify(listed.json),
      JSON.stringify(await forwardsOf(running, id)),
      JSON.stringify((await api(running, '/api/forwards')).json),
      JSON.stringify(lines),
    ].join('\n');
    expect(shown).toContain('ACCESS_REFUSED');
    expect(shown).toContain('no JetStream stream takes the subject');
    for (const secret of [password, decodeURIComponent(password), 's3cret']) expect(shown).not.toContain(secret);
  });
});
