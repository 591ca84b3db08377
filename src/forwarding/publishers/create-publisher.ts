import { AmqpPublisher } from './amqp-publisher.js';
import type { BrokerPublisherOptions } from './broker-publisher.js';
import type { Destination } from '../destination.js';
import { HttpPublisher } from './http-publisher.js';
import { NatsPublisher } from './nats-publisher.js';
import type { Publisher } from './publisher.js';
import { RedisPublisher } from './redis-publisher.js';

/** The publisher of a destination that Reception sends to itself, by its kind. */
export function createPublisher(destination: Destination, options: BrokerPublisherOptions): Publisher {
  switch (destination.kind) {
    case 'nats':
      return new NatsPublisher(destination, options);
    case 'amqp':
      return new AmqpPublisher(destination, options);
    case 'redis':
      return new RedisPublisher(destination, options);
    case 'http':
      return new HttpPublisher(destination, { redactHeaders: options.redactHeaders });
    case 'pull':
      throw new Error(`destination ${destination.name} is pulled from: nothing publishes to it`);
  }
}
