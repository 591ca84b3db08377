import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
import type { ServerProcess } from '../helpers/server-process.js';
import { apiCall, sendSome } from '../helpers/forwarding-process.js';
import { API_TOKEN, ServerChildren, timedExit } from '../helpers/server-children.js';

/**
 * The three brokers from the config file alone (CONTRACT 7), in a real
 * server process: a YAML file names them, deliveries reach each; SIGTERM
 * with publishes in flight exits 0, and what was not yet published is
 * published after a restart, each delivery once on JetStream and at least
 * once elsewhere. On SQLite: the stores' side is the same for every kind of
 * destination, and test/forward runs the brokers on both stores.
 */

const children = new ServerChildren();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await children.cleanup();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Row {
  name: string;
  kind: string;
  pending: number;
  failed: number;
  connection: { state: string } | null;
}

describe('broker destinations from the config file, in a server process', { timeout: 90_000 }, () => {
  it('publishes to NATS, RabbitMQ and Redis; SIGTERM settles what is in flight, a restart sends the rest', async () => {
    for (const broker of ['nats', 'amqp', 'redis'] as const) if (!(await requireBroker(broker, 'broker process tests'))) return;
    const prefix = uniqueName('rt');
    const stream = await natsStream([`${prefix}.>`]);
    const queue = await amqpQueue('#');
    const redis = await redisStreams();
    cleanups.push(
      () => stream.remove(),
      () => queue.remove(),
      () => redis.remove(),
    );
    const data = children.dataDir();
    const config = join(data, 'reception.yaml');
    const quick = 'allowPrivateNetwork: true\n    retry: { attempts: 1000, initialMs: 50, maxMs: 500 }';
    writeFileSync(
      config,
      [
        'destinations:',
        '  bus:',
        `    nats: { url: "${NATS_URL}", subject: "${prefix}.{source}.{eventType}" }`,
        `    ${quick}`,
        '  rabbit:',
        `    amqp: { url: "${AMQP_URL}", exchange: "${queue.exchange}", routingKey: "{source}.{eventType}" }`,
        `    ${quick}`,
        '  stream:',
        `    redis: { url: "${REDIS_URL}", stream: "${redis.prefix}{source}", maxLen: 100000 }`,
        `    ${quick}`,
        'sources:',
        '  shop:',
        '    forward: [{ to: bus }, { to: rabbit }, { to: stream }]',
        '',
      ].join('\n'),
    );
    const env = { RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: config };
    const rows = async (server: ServerProcess): Promise<Row[]> =>
      (await apiCall<{ items: Row[] }>(server, '/api/destinations')).json.items;
    const settled = async (server: ServerProcess): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while ((await rows(server)).some((row) => row.pending > 0)) {
        if (Date.now() > deadline) throw new Error(`still pending: ${JSON.stringify(await rows(server))}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    const first = await children.start(env);
    const before = await sendSome(first, 'shop', 10, 'before');
    await settled(first);
    expect(await rows(first)).toEqual([
      expect.objectContaining({
        name: 'bus',
        kind: 'nats',
        failed: 0,
        connection: expect.objectContaining({ state: 'connected' }),
      }),
      expect.objectContaining({
        name: 'rabbit',
        kind: 'amqp',
        failed: 0,
        connection: expect.objectContaining({ state: 'connected' }),
      }),
      expect.objectContaining({
        name: 'stream',
        kind: 'redis',
        failed: 0,
        connection: expect.objectContaining({ state: 'connected' }),
      }),
    ]);
    const during = await sendSome(first, 'shop', 30, 'during');
    children.signal(first, 'SIGTERM');
    const { code } = await timedExit(first, 15_000);
    expect(code).toBe(0);

    // A forward left `delivering` by the first process would wait for its lease (at least
    // the 30 s margin beyond the 10 s timeout): settling within 30 s says none was.
    const second = await children.start(env);
    await settled(second);
    expect((await rows(second)).map((row) => row.failed)).toEqual([0, 0, 0]);
    const ids = [...before, ...during].sort();
    const natsIds = (await stream.messages()).map((m) => m.header?.get('Nats-Msg-Id'));
    expect([...natsIds].sort()).toEqual(ids);
    const amqpIds = new Set((await queue.messages()).map((m) => String(m.properties.messageId)));
    const redisIds = new Set((await redis.entries(`${redis.prefix}shop`)).map((e) => e.fields.id?.toString()));
    for (const id of ids) {
      expect(amqpIds.has(id), id).toBe(true);
      expect(redisIds.has(id), id).toBe(true);
    }
    // Nothing the server logged carries a broker URL's credentials.
    expect([...first.logs, ...second.logs].join('\n')).not.toContain('guest:guest');
  });
});
