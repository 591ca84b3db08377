import { Type, type Static } from 'typebox';
import { VERIFY_SCHEMES } from '../verify/create-verifier.js';
import { DestinationConfigSchema, ForwardRouteSchema } from './destination-config-schema.js';

/** The single source of the config file's shape and of its TypeScript types (CONTRACT 4). */

export const HANDSHAKES = ['slack', 'meta', 'zoom', 'graph', 'x'] as const;

/** A header's name (RFC 9110 token): a name that no request can carry would never match, silently. */
const HeaderNameSchema = Type.String({ minLength: 1, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" });

export const VerifyConfigSchema = Type.Object({
  // The schemes src/verify implements: one list, so that the file can name no scheme without a verifier.
  scheme: Type.Enum([...VERIFY_SCHEMES]),
  secrets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  publicUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  header: Type.Optional(HeaderNameSchema),
  algorithm: Type.Optional(Type.Enum(['sha1', 'sha256', 'sha512'])),
  encoding: Type.Optional(Type.Enum(['hex', 'base64'])),
  prefix: Type.Optional(Type.String()),
}, { additionalProperties: false });
export type VerifyConfig = Static<typeof VerifyConfigSchema>;

export const HandshakeConfigSchema = Type.Object({
  type: Type.Enum([...HANDSHAKES]),
  /** Meta: the token you typed into the app's webhook settings. */
  verifyToken: Type.Optional(Type.String({ minLength: 1 })),
  /** X: the consumer secret; Zoom: the secret token when the source does not verify. */
  secret: Type.Optional(Type.String({ minLength: 1 })),
}, { additionalProperties: false });
export type HandshakeConfig = Static<typeof HandshakeConfigSchema>;

export const SourceConfigSchema = Type.Object({
  verify: Type.Optional(VerifyConfigSchema),
  handshake: Type.Optional(HandshakeConfigSchema),
  dedup: Type.Optional(Type.Object({ header: HeaderNameSchema }, { additionalProperties: false })),
  anyJson: Type.Optional(Type.Boolean()),
  maxBodyBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 * 1024 * 1024 })),
  rateLimit: Type.Optional(Type.Object({
    requests: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    // From a millisecond to a year: a rate that rounds to infinity let every
    // request through (0 × ∞ tokens is NaN), and the wait is told in
    // Retry-After, which takes digits only (1e+30 is no delay-seconds).
    perSeconds: Type.Number({ minimum: 0.001, maximum: 31_536_000 }),
  }, { additionalProperties: false })),
  onFailure: Type.Optional(Type.Enum(['reject', 'keep'])),
  forward: Type.Optional(Type.Array(ForwardRouteSchema)),
}, { additionalProperties: false });
export type SourceConfig = Static<typeof SourceConfigSchema>;

export const ConfigFileSchema = Type.Object({
  strict: Type.Optional(Type.Boolean()),
  sources: Type.Optional(Type.Record(Type.String(), SourceConfigSchema)),
  destinations: Type.Optional(Type.Record(Type.String(), DestinationConfigSchema)),
}, { additionalProperties: false });
export type ConfigFile = Static<typeof ConfigFileSchema>;
