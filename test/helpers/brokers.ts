import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp, { type GetMessage } from 'amqplib';
import { createClient, RESP_TYPES } from 'redis';

/**
 * The machine's brokers (NATS with JetStream on 4222, RabbitMQ on 5672 as
 * guest/guest, Redis on 6379), and what a test declares on them: Reception
 * declares nothing, so each test makes its own uniquely named stream,
 * exchange and queue, or stream key, reads what was published, and deletes
 * them after.
 */

export const NATS_URL = 'nats://127.0.0.1:4222';
export const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
export const REDIS_URL = 'redis://127.0.0.1:6379';

export type BrokerName = 'nats' | 'amqp' | 'redis';
const PORTS: Record<BrokerName, number> = { nats: 4222, amqp: 5672, redis: 6379 };

export function uniqueName(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** Whether something listens on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Skip (locally, loudly) or fail (CI=true: a missing broker is a failure) when the broker is not there. */
export async function requireBroker(broker: BrokerName, suite: string): Promise<boolean> {
  if (await listening(PORTS[broker])) return true;
  const message = `${broker} is not listening on 127.0.0.1:${PORTS[broker]}.`;
  if (process.env.CI === 'true') throw new Error(`${message} CI needs it for ${suite} (.ci/run starts it).`);
  process.stderr.write(`\n!!! SKIPPING ${suite}: ${message}\n!!! Start it as .ci/run does to run these tests.\n\n`);
  return false;
}

/** A JetStream stream of its own on `subjects`; `messages()` reads every message it holds. */
export async function natsStream(subjects: string[], url = NATS_URL, duplicateWindowMs = 120_000) {
  // The test's own server may be restarted under it: reconnect soon and without end.
  const nc = await natsConnect({ servers: new URL(url).host, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  const jsm = await jetstreamManager(nc);
  const name = uniqueName('RECEPTION_TEST_');
  await jsm.streams.add({ name, subjects, duplicate_window: duplicateWindowMs * 1_000_000 });
  /** The stream's state; tried again for up to 10 s while this client reconnects to a restarted server. */
  const streamInfo = async () => {
    for (let tries = 1; ; tries++) {
      try {
        return await jsm.streams.info(name);
      } catch (error) {
        if (tries >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
  return {
    name,
    async count(): Promise<number> {
      return (await streamInfo()).state.messages;
    },
    async messages(): Promise<StoredMsg[]> {
      const info = await streamInfo();
      const list: StoredMsg[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const message = await jsm.streams.getMessage(name, { seq });
        if (message !== null) list.push(message);
      }
      return list;
    },
    async remove(): Promise<void> {
      await jsm.streams.delete(name).catch(() => undefined);
      await nc.close();
    },
  };
}

/** A topic exchange of its own with one queue bound on `pattern`; `messages()` takes what the queue holds. */
export async function amqpQueue(pattern = '#', url = AMQP_URL) {
  const model = await amqp.connect(url);
  const channel = await model.createChannel();
  const exchange = uniqueName('reception.test.');
  const queue = uniqueName('reception.test.q.');
  await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
  await channel.assertQueue(queue, { durable: false, autoDelete: false });
  await channel.bindQueue(queue, exchange, pattern);
  return {
    exchange,
    queue,
    async bind(another: string): Promise<void> {
      await channel.bindQueue(queue, exchange, another);
    },
    async count(): Promise<number> {
      return (await channel.checkQueue(queue)).messageCount;
    },
    async messages(): Promise<GetMessage[]> {
      const list: GetMessage[] = [];
      for (
        let message = await channel.get(queue, { noAck: true });
        message !== false;
        message = await channel.get(queue, { noAck: true })
      )
        list.push(message);
      return list;
    },
    async remove(): Promise<void> {
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.deleteExchange(exchange).catch(() => undefined);
      await model.close().catch(() => undefined);
    },
  };
}

/** A Redis client for reading streams with a key prefix of its own; `remove()` deletes every key under it. */
export async function redisStreams(url = REDIS_URL) {
  const client = createClient({ url });
  await client.connect();
  const prefix = uniqueName('reception:test:');
  return {
    prefix,
    async entries(key: string): Promise<Array<{ id: string; fields: Record<string, Buffer> }>> {
      const raw = await client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).xRange(key, '-', '+');
      return (raw ?? []).map((entry) => ({ id: String(entry.id), fields: { ...(entry.message as Record<string, Buffer>) } }));
    },
    async remove(): Promise<void> {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(keys);
      await client.close();
    },
  };
}
