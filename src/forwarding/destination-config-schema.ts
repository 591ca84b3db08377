import { Type, type Static } from 'typebox';

/** The config file's `destinations` and the sources' `forward` routes (CONTRACT 6). */

/** A destination's name: it appears in URLs (`/api/destinations/{name}`) and in metric labels. */
export const DESTINATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const RetryConfigSchema = Type.Object(
  {
    attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    initialMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400_000 })),
    maxMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 86_400_000 })),
    maxAgeSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 * 86_400 })),
  },
  { additionalProperties: false },
);
export type RetryConfig = Static<typeof RetryConfigSchema>;

/**
 * A push destination's circuit (docs/circuits.md): it opens after `failures`
 * consecutive failed attempts, for `cooldownSeconds` (doubling while probes
 * fail, at most 600). A pull destination has none.
 */
export const BreakerConfigSchema = Type.Object(
  {
    failures: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    cooldownSeconds: Type.Optional(Type.Number({ minimum: 0.05, maximum: 600 })),
  },
  { additionalProperties: false },
);
export type BreakerConfig = Static<typeof BreakerConfigSchema>;

/**
 * The brokers a destination may publish to (CONTRACT 7). Reception declares
 * nothing: the stream, exchange or queue must exist. Names take `{source}`
 * and `{eventType}` (src/forwarding/publishers/broker-names.ts).
 */
export const NatsConfigSchema = Type.Object(
  {
    url: Type.String({ minLength: 1 }),
    subject: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);
export type NatsConfig = Static<typeof NatsConfigSchema>;

export const AmqpConfigSchema = Type.Object(
  {
    url: Type.String({ minLength: 1 }),
    exchange: Type.String({ maxLength: 255 }),
    routingKey: Type.String({ maxLength: 1000 }),
  },
  { additionalProperties: false },
);
export type AmqpConfig = Static<typeof AmqpConfigSchema>;

export const RedisConfigSchema = Type.Object(
  {
    url: Type.String({ minLength: 1 }),
    stream: Type.String({ minLength: 1, maxLength: 1000 }),
    maxLen: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
  },
  { additionalProperties: false },
);
export type RedisConfig = Static<typeof RedisConfigSchema>;

export const DestinationConfigSchema = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1 })),
    pull: Type.Optional(Type.Boolean()),
    nats: Type.Optional(NatsConfigSchema),
    amqp: Type.Optional(AmqpConfigSchema),
    redis: Type.Optional(RedisConfigSchema),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    rateLimit: Type.Optional(
      Type.Object(
        {
          requests: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
          perSeconds: Type.Number({ minimum: 0.001, maximum: 31_536_000 }),
        },
        { additionalProperties: false },
      ),
    ),
    retry: Type.Optional(RetryConfigSchema),
    breaker: Type.Optional(BreakerConfigSchema),
    ordered: Type.Optional(Type.Boolean()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    sign: Type.Optional(
      Type.Object(
        {
          secrets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
        },
        { additionalProperties: false },
      ),
    ),
    allowPrivateNetwork: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type DestinationConfig = Static<typeof DestinationConfigSchema>;

export const ForwardRouteSchema = Type.Object(
  {
    to: Type.String({ minLength: 1 }),
    filter: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** The name of a transform (CONTRACT 10) that reshapes what this route sends. */
    transform: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);
export type ForwardRoute = Static<typeof ForwardRouteSchema>;
