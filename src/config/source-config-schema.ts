import { Type, type Static } from 'typebox';
import { HeaderNameSchema, VerifyConfigSchema } from '../verify/verify-config-schema.js';
import { DestinationConfigSchema, ForwardRouteSchema } from '../forwarding/destination-config-schema.js';
import { ACCEPT_KINDS } from '../body/media-type.js';
import { TransformConfigSchema } from '../transforms/transform-config-schema.js';
import { AlertsConfigSchema } from '../alerts/alerts-config-schema.js';

/** The single source of the config file's shape and of its TypeScript types (CONTRACT 4). */

export const HANDSHAKES = ['slack', 'meta', 'zoom', 'graph', 'x'] as const;

// The `verify` block: its schema lives beside the verifiers (verify/ may not
// import config/, which builds verifiers to check the block), with the lists
// of schemes, algorithms and encodings it names; the file can name no scheme
// without a verifier.
export { VerifyConfigSchema, type VerifyConfig } from '../verify/verify-config-schema.js';

export const HandshakeConfigSchema = Type.Object(
  {
    type: Type.Enum([...HANDSHAKES]),
    /** Meta: the token you typed into the app's webhook settings. */
    verifyToken: Type.Optional(Type.String({ minLength: 1 })),
    /** X: the consumer secret; Zoom: the secret token when the source does not verify. */
    secret: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);
export type HandshakeConfig = Static<typeof HandshakeConfigSchema>;

/** The longest `response.body` a source may set: an answer, not a page. */
export const MAX_RESPONSE_BODY_CHARS = 64 * 1024;

/** What a stored delivery (and a duplicate) is answered (CONTRACT 9); unset parts keep section 1's answer. */
export const ResponseConfigSchema = Type.Object(
  {
    status: Type.Optional(Type.Integer({ minimum: 200, maximum: 299 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    body: Type.Optional(Type.String({ maxLength: MAX_RESPONSE_BODY_CHARS })),
  },
  { additionalProperties: false },
);
export type ResponseConfig = Static<typeof ResponseConfigSchema>;

/**
 * Where a source's event type is read (CONTRACT 8) when its scheme does not
 * say: a header, or a dotted path into the body (`data.kind`; for form data,
 * the field of that name). Exactly one of the two.
 */
export const EventTypeConfigSchema = Type.Object(
  {
    header: Type.Optional(HeaderNameSchema),
    body: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^[^.]+(\\.[^.]+)*$' })),
  },
  { additionalProperties: false },
);
export type EventTypeConfig = Static<typeof EventTypeConfigSchema>;

export const SourceConfigSchema = Type.Object(
  {
    verify: Type.Optional(VerifyConfigSchema),
    handshake: Type.Optional(HandshakeConfigSchema),
    dedup: Type.Optional(Type.Object({ header: HeaderNameSchema }, { additionalProperties: false })),
    anyJson: Type.Optional(Type.Boolean()),
    maxBodyBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 * 1024 * 1024 })),
    rateLimit: Type.Optional(
      Type.Object(
        {
          requests: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
          // From a millisecond to a year: a rate that rounds to infinity let every
          // request through (0 × ∞ tokens is NaN), and the wait is told in
          // Retry-After, which takes digits only (1e+30 is no delay-seconds).
          perSeconds: Type.Number({ minimum: 0.001, maximum: 31_536_000 }),
        },
        { additionalProperties: false },
      ),
    ),
    onFailure: Type.Optional(Type.Enum(['reject', 'keep'])),
    forward: Type.Optional(Type.Array(ForwardRouteSchema)),
    /** The kinds of body taken (CONTRACT 9); `[json, form]` when absent. */
    accept: Type.Optional(Type.Array(Type.Enum([...ACCEPT_KINDS]), { minItems: 1 })),
    response: Type.Optional(ResponseConfigSchema),
    eventType: Type.Optional(EventTypeConfigSchema),
  },
  { additionalProperties: false },
);
export type SourceConfig = Static<typeof SourceConfigSchema>;

export const ConfigFileSchema = Type.Object(
  {
    strict: Type.Optional(Type.Boolean()),
    sources: Type.Optional(Type.Record(Type.String(), SourceConfigSchema)),
    destinations: Type.Optional(Type.Record(Type.String(), DestinationConfigSchema)),
    /** Transforms by name (CONTRACT 10); after loading, each holds its `code`, read from its `file` where it names one. */
    transforms: Type.Optional(Type.Record(Type.String(), TransformConfigSchema)),
    /** What opens a backlog issue, and the destinations told of issues (CONTRACT 11). */
    alerts: Type.Optional(AlertsConfigSchema),
  },
  { additionalProperties: false },
);
export type ConfigFile = Static<typeof ConfigFileSchema>;
