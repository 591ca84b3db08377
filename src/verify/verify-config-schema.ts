import { Type, type Static } from 'typebox';

/**
 * A source's `verify` block in the config file (CONTRACT 4): its schema, and
 * the lists it names, are the one source of the block's TypeScript type here
 * and in config/. A leaf (it imports typebox only), in verify/ because
 * config/ already imports verify/ (it builds each verifier to check the
 * block): verify/ importing config/ would make a cycle between the folders.
 */

/** Every scheme a `verify` block may name; create-verifier.ts has a builder for each (the compiler checks both ways). */
export const VERIFY_SCHEMES = ['stripe', 'github', 'standard-webhooks', 'shopify', 'slack', 'twilio', 'zoom', 'hmac'] as const;
export type VerifyScheme = (typeof VERIFY_SCHEMES)[number];

/** The digests the `hmac` scheme takes (sha256 when absent); the other schemes use these too. */
export const HMAC_ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];

/** How the `hmac` scheme's header spells the digest (hex when absent). */
export const HMAC_ENCODINGS = ['hex', 'base64'] as const;
export type HmacEncoding = (typeof HMAC_ENCODINGS)[number];

/** A header's name (RFC 9110 token): a name that no request can carry would never match, silently. */
export const HeaderNameSchema = Type.String({ minLength: 1, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" });

export const VerifyConfigSchema = Type.Object(
  {
    scheme: Type.Enum([...VERIFY_SCHEMES]),
    secrets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    /** Schemes with a timestamp: stripe, standard-webhooks, slack, zoom. */
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    /** twilio only. */
    publicUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    /** hmac only, as are algorithm, encoding and prefix. */
    header: Type.Optional(HeaderNameSchema),
    algorithm: Type.Optional(Type.Enum([...HMAC_ALGORITHMS])),
    encoding: Type.Optional(Type.Enum([...HMAC_ENCODINGS])),
    prefix: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type VerifyConfig = Static<typeof VerifyConfigSchema>;
