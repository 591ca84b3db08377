import type { AmqpConfig, DestinationConfig, NatsConfig, RedisConfig } from './destination-config-schema.js';
import type { RetryBudget } from './outbox/outbox.js';
import { BREAKER_DEFAULTS, type Breaker } from './circuit/circuit.js';

export type DestinationKind = 'http' | 'pull' | 'nats' | 'amqp' | 'redis';

/** The broker a destination publishes to (CONTRACT 7), as the config file says it. */
export type BrokerTarget =
  { kind: 'nats'; nats: NatsConfig } | { kind: 'amqp'; amqp: AmqpConfig } | { kind: 'redis'; redis: RedisConfig };

/** A destination's settings with the contract's defaults filled in (CONTRACT 6). */
export interface Destination {
  name: string;
  kind: DestinationKind;
  /** The HTTP destination's URL, or the broker's. */
  url?: URL;
  broker?: BrokerTarget;
  timeoutMs: number;
  concurrency: number;
  rateLimit?: { requests: number; perSeconds: number };
  retry: { attempts: number; initialMs: number; maxMs: number; maxAgeSeconds: number };
  /** Its circuit's settings (docs/circuits.md); a pull destination's are unused. */
  breaker: Breaker;
  ordered: boolean;
  headers: ReadonlyArray<[string, string]>;
  signSecret?: string;
  allowPrivateNetwork: boolean;
}

export const RETRY_DEFAULTS = { attempts: 12, initialMs: 1000, maxMs: 3_600_000, maxAgeSeconds: 259_200 } as const;

export function resolveDestination(name: string, config: DestinationConfig): Destination {
  const destination: Destination = {
    name,
    kind: kindOf(config),
    timeoutMs: config.timeoutMs ?? 10_000,
    concurrency: config.concurrency ?? 10,
    retry: { ...RETRY_DEFAULTS, ...config.retry },
    breaker: {
      failures: config.breaker?.failures ?? BREAKER_DEFAULTS.failures,
      cooldownMs: Math.round((config.breaker?.cooldownSeconds ?? BREAKER_DEFAULTS.cooldownSeconds) * 1000),
    },
    ordered: config.ordered ?? false,
    headers: Object.entries(config.headers ?? {}),
    allowPrivateNetwork: config.allowPrivateNetwork ?? false,
  };
  if (config.url !== undefined) destination.url = new URL(config.url);
  if (config.nats !== undefined) destination.broker = { kind: 'nats', nats: config.nats };
  if (config.amqp !== undefined) destination.broker = { kind: 'amqp', amqp: config.amqp };
  if (config.redis !== undefined) destination.broker = { kind: 'redis', redis: config.redis };
  if (destination.broker !== undefined) destination.url = new URL(brokerUrl(destination.broker));
  if (config.rateLimit !== undefined) destination.rateLimit = config.rateLimit;
  const secret = config.sign?.secrets[0];
  if (secret !== undefined) destination.signSecret = secret;
  return destination;
}

function kindOf(config: DestinationConfig): DestinationKind {
  if (config.pull === true) return 'pull';
  if (config.nats !== undefined) return 'nats';
  if (config.amqp !== undefined) return 'amqp';
  if (config.redis !== undefined) return 'redis';
  return 'http';
}

export function brokerUrl(target: BrokerTarget): string {
  return target.kind === 'nats' ? target.nats.url : target.kind === 'amqp' ? target.amqp.url : target.redis.url;
}

/** Whether Reception sends the destination's forwards itself (every kind but pull). */
export function isPushed(destination: Destination): boolean {
  return destination.kind !== 'pull';
}

export function resolveDestinations(config: Record<string, DestinationConfig> | undefined): Map<string, Destination> {
  return new Map(Object.entries(config ?? {}).map(([name, settings]) => [name, resolveDestination(name, settings)]));
}

export function budgetOf(destination: Destination): RetryBudget {
  return { attempts: destination.retry.attempts, maxAgeMs: destination.retry.maxAgeSeconds * 1000 };
}

/** Two resolved destinations that would send the same way (a reload keeps the running one). */
export function sameDestination(a: Destination, b: Destination): boolean {
  return JSON.stringify({ ...a, url: a.url?.href }) === JSON.stringify({ ...b, url: b.url?.href });
}
