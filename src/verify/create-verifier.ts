import { GenericHmacVerifier } from './hmac.js';
import { GitHubVerifier } from './github.js';
import { ShopifyVerifier } from './shopify.js';
import { SlackVerifier } from './slack.js';
import { StandardWebhooksVerifier } from './standard-webhooks.js';
import { StripeVerifier } from './stripe.js';
import { TwilioVerifier } from './twilio.js';
import { VerifyConfigError, type Verifier } from './verifier.js';
import { VERIFY_SCHEMES, type VerifyConfig, type VerifyScheme } from './verify-config-schema.js';
import { ZoomVerifier } from './zoom.js';

export { VERIFY_SCHEMES, type VerifyConfig, type VerifyScheme };

/** The block's keys besides scheme and secrets, each used by some schemes only. */
type OptionKey = Exclude<keyof VerifyConfig, 'scheme' | 'secrets'>;

const SCHEMES = {
  stripe: { options: ['toleranceSeconds'], build: (c: VerifyConfig) => new StripeVerifier(c) },
  github: { options: [], build: (c: VerifyConfig) => new GitHubVerifier(c) },
  'standard-webhooks': { options: ['toleranceSeconds'], build: (c: VerifyConfig) => new StandardWebhooksVerifier(c) },
  shopify: { options: [], build: (c: VerifyConfig) => new ShopifyVerifier(c) },
  slack: { options: ['toleranceSeconds'], build: (c: VerifyConfig) => new SlackVerifier(c) },
  twilio: {
    options: ['publicUrl'],
    build: (c: VerifyConfig) => new TwilioVerifier({ secrets: c.secrets, publicUrl: c.publicUrl ?? '' }),
  },
  zoom: { options: ['toleranceSeconds'], build: (c: VerifyConfig) => new ZoomVerifier(c) },
  hmac: {
    options: ['header', 'algorithm', 'encoding', 'prefix'],
    build: (c: VerifyConfig) => new GenericHmacVerifier({ ...c, header: c.header ?? '' }),
  },
} satisfies Record<VerifyScheme, { options: OptionKey[]; build: (config: VerifyConfig) => Verifier }>;

const OPTION_KEYS: readonly OptionKey[] = ['toleranceSeconds', 'publicUrl', 'header', 'algorithm', 'encoding', 'prefix'];

export function isVerifyScheme(name: string): name is VerifyScheme {
  return Object.hasOwn(SCHEMES, name);
}

/**
 * Builds the verifier a `verify` block describes. An unknown scheme, a
 * missing or bad option, or an option the scheme does not use throws a
 * `VerifyConfigError` naming the key: a source is never left unverified by
 * mistake.
 */
export function createVerifier(config: VerifyConfig): Verifier {
  const scheme = config.scheme;
  if (typeof scheme !== 'string' || !isVerifyScheme(scheme)) {
    throw new VerifyConfigError(
      'scheme',
      `unknown scheme ${JSON.stringify(scheme)}; expected one of ${VERIFY_SCHEMES.join(', ')}`,
    );
  }
  const entry = SCHEMES[scheme];
  const allowed: readonly OptionKey[] = entry.options;
  for (const key of OPTION_KEYS) {
    if (config[key] !== undefined && !allowed.includes(key)) {
      throw new VerifyConfigError(key, `the ${scheme} scheme does not use ${key}`);
    }
  }
  return entry.build(config);
}
