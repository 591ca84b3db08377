import { Type } from 'typebox';
import { FORWARD_STATUSES } from './forward-status.js';
import { POSITIVE_DIGITS } from '../platform/http/query-params.js';
import { DeliverySchema } from './schemas.js';

/** The forwarding API's shapes (CONTRACT 6): validation, serialization and the OpenAPI document. */

const Time = Type.Union([Type.String({ description: 'RFC 3339 UTC with milliseconds' }), Type.Null()]);
const StatusSchema = Type.Enum([...FORWARD_STATUSES]);

export const DestinationListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      name: Type.String(),
      kind: Type.String({
        description:
          '`http`, `pull`, `nats`, `amqp`, `redis`, or `removed` for a destination that the config no longer names but that still has forwards',
      }),
      url: Type.Union([Type.String({ description: 'the HTTP or broker URL, without credentials or query' }), Type.Null()]),
      paused: Type.Boolean(),
      pending: Type.Integer({ description: 'forwards not yet settled: pending and delivering' }),
      failed: Type.Integer(),
      oldestPendingAt: Time,
      lastSuccessAt: Time,
      lastFailureAt: Time,
      lastError: Type.Union([Type.String(), Type.Null()]),
      connection: Type.Union(
        [
          Type.Object({
            state: Type.Enum(['connecting', 'connected', 'disconnected', 'closed']),
            lastError: Type.Union([Type.String(), Type.Null()], {
              description: 'why the last connection failed or was lost (never a password)',
            }),
            since: Type.String({ description: 'when the state last changed, RFC 3339 UTC with milliseconds' }),
          }),
          Type.Null(),
        ],
        { description: "a broker destination's connection; null for an HTTP or pull destination" },
      ),
      circuit: Type.Object(
        {
          state: Type.Enum(['closed', 'open', 'half_open']),
          since: Type.Union([Type.String({ description: 'RFC 3339 UTC with milliseconds' }), Type.Null()], {
            description: 'when the circuit entered its state; null when it never opened',
          }),
          consecutiveFailures: Type.Integer({ description: 'failed attempts since the last success' }),
          until: Type.Union([Type.String({ description: 'RFC 3339 UTC with milliseconds' }), Type.Null()], {
            description:
              "open: when its cooldown ends and a probe is tried; half open: when the probe's window ends; null when closed",
          }),
        },
        {
          description:
            "the destination's circuit (shared by every instance on the store): open after `breaker.failures` consecutive failed attempts, then one probe; always closed for a pull destination",
        },
      ),
    }),
  ),
});

export const AttemptSchema = Type.Object({
  n: Type.Integer(),
  startedAt: Type.String(),
  durationMs: Type.Integer(),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'the HTTP status, or null when there was none' }),
  error: Type.Union([Type.String(), Type.Null()]),
  response: Type.Union(
    [
      Type.Object({
        headers: Type.Array(Type.Tuple([Type.String(), Type.String()]), {
          description: "the answer's headers as [name, value] pairs, in the order they came",
        }),
        body: Type.String({ description: 'the first 4 KiB (4096 bytes) of the body as text, invalid UTF-8 replaced' }),
        bodyTruncated: Type.Boolean({ description: 'true when the body was longer (the rest was not read)' }),
      }),
      Type.Null(),
    ],
    {
      description:
        "the destination's answer; null when there was none (a timeout, a refused connection, a broker, a pull consumer)",
    },
  ),
  transform: Type.Union(
    [
      Type.Object({
        name: Type.String(),
        version: Type.String({ description: "the first 12 hex digits of the code's SHA-256" }),
      }),
      Type.Null(),
    ],
    { description: 'the transform that ran for this attempt (its route names one); null when none did' },
  ),
});

export const DeliveryForwardsSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String(),
      destination: Type.String(),
      status: StatusSchema,
      nextAttemptAt: Time,
      attempts: Type.Array(AttemptSchema),
    }),
  ),
});

export const ForwardSchema = Type.Object({
  id: Type.String(),
  deliveryId: Type.String(),
  seq: Type.Integer(),
  source: Type.String(),
  destination: Type.String(),
  status: StatusSchema,
  attemptCount: Type.Integer(),
  nextAttemptAt: Time,
  lastAttemptAt: Type.Union([
    Type.String({ description: 'when the latest attempt started (the one in flight, if any); null: none yet' }),
    Type.Null(),
  ]),
  lastStatus: Type.Union([Type.Integer({ description: 'the HTTP status the destination last answered' }), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
});

export const ForwardPageSchema = Type.Object({
  items: Type.Array(ForwardSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const ForwardListQuerySchema = Type.Object({
  destination: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(StatusSchema),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  limit: Type.Optional(
    Type.String({
      pattern: POSITIVE_DIGITS,
      description: 'Forwards per page: a whole number from 1 (50 when absent); above 500 is taken as 500.',
    }),
  ),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z_-]{1,32}$' })),
});

export const RetryBodySchema = Type.Union([
  Type.Object(
    { ids: Type.Array(Type.String({ maxLength: 1000 }), { minItems: 1, maxItems: 10_000 }) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      status: Type.Literal('failed', { description: 'only failed forwards are retried' }),
      destination: Type.Optional(Type.String({ minLength: 1 })),
      source: Type.Optional(Type.String({ minLength: 1 })),
      since: Type.Optional(Type.String({ format: 'date-time', description: 'forwards created at or after (RFC 3339)' })),
      until: Type.Optional(Type.String({ format: 'date-time', description: 'forwards created before (RFC 3339)' })),
    },
    { additionalProperties: false },
  ),
]);

export const ClaimBodySchema = Type.Object(
  {
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'forwards to claim, at most (default 10)' })),
    visibilitySeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 43_200, description: 'how long the claim holds them (default 30)' }),
    ),
  },
  { additionalProperties: false },
);

export const ClaimAnswerSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      forwardId: Type.String(),
      attempt: Type.Integer(),
      lease: Type.String({ description: 'this claim of the forward, new for every claim: ack and nack present it' }),
      delivery: DeliverySchema,
    }),
  ),
});

const Lease = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'the lease of the claimed item, as the claim answered it (required)',
});

export const AckBodySchema = Type.Object({ lease: Lease }, { additionalProperties: false });

export const NackBodySchema = Type.Object(
  {
    lease: Lease,
    delaySeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000 })),
  },
  { additionalProperties: false },
);

export const SendAgainBodySchema = Type.Object(
  {
    destination: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

export const NameParamsSchema = Type.Object({ name: Type.String({ maxLength: 1000 }) });
