import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { createClient } from 'redis';

/**
 * The broker destinations of the sustained forwarding cases (issue 20): the
 * machine's NATS with JetStream (127.0.0.1:4222), RabbitMQ (5672, guest)
 * and Redis (6379). Reception declares nothing, so the bench makes a
 * stream, an exchange with one queue, or a stream key of its own for each
 * case, counts what arrived there (the cross-check that the HTTP cases
 * read from their destination's /count), and deletes it after.
 */

export type BrokerKind = 'nats' | 'amqp' | 'redis';

export interface BrokerSink {
  /** The destination's settings in Reception's config file. */
  settings: Record<string, unknown>;
  /** Messages the broker holds from this case. */
  received(): Promise<number>;
  remove(): Promise<void>;
}

const unique = (): string => randomBytes(5).toString('hex');

export async function brokerSink(kind: BrokerKind): Promise<BrokerSink> {
  if (kind === 'nats') return natsSink();
  if (kind === 'amqp') return amqpSink();
  return redisSink();
}

async function natsSink(): Promise<BrokerSink> {
  const nc = await natsConnect({ servers: '127.0.0.1:4222' });
  const jsm = await jetstreamManager(nc);
  const name = `RECEPTION_BENCH_${unique()}`;
  const prefix = `bench${unique()}`;
  await jsm.streams.add({ name, subjects: [`${prefix}.>`] });
  return {
    settings: { nats: { url: 'nats://127.0.0.1:4222', subject: `${prefix}.{source}` }, allowPrivateNetwork: true },
    received: async () => (await jsm.streams.info(name)).state.messages,
    remove: async () => {
      await jsm.streams.delete(name).catch(() => undefined);
      await nc.close();
    },
  };
}

async function amqpSink(): Promise<BrokerSink> {
  const model = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
  const channel = await model.createChannel();
  const exchange = `reception.bench.${unique()}`;
  const queue = `${exchange}.q`;
  await channel.assertExchange(exchange, 'topic', { durable: false });
  await channel.assertQueue(queue, { durable: false });
  await channel.bindQueue(queue, exchange, '#');
  return {
    settings: {
      amqp: { url: 'amqp://guest:guest@127.0.0.1:5672', exchange, routingKey: '{source}.{eventType}' },
      allowPrivateNetwork: true,
    },
    received: async () => (await channel.checkQueue(queue)).messageCount,
    remove: async () => {
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.deleteExchange(exchange).catch(() => undefined);
      await model.close().catch(() => undefined);
    },
  };
}

async function redisSink(): Promise<BrokerSink> {
  const client = createClient({ url: 'redis://127.0.0.1:6379' });
  await client.connect();
  const prefix = `reception:bench:${unique()}:`;
  return {
    // No maxLen: the count must see every entry.
    settings: { redis: { url: 'redis://127.0.0.1:6379', stream: `${prefix}{source}` }, allowPrivateNetwork: true },
    received: async () => {
      const keys = await client.keys(`${prefix}*`);
      let total = 0;
      for (const key of keys) total += await client.xLen(key);
      return total;
    },
    remove: async () => {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(keys);
      await client.close();
    },
  };
}
