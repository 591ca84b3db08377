import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { ConfigFileSchema } from './source-config-schema.js';

/** The names of the properties a JSON schema and the schemas inside it declare. */
function propertyNames(schema: unknown, names = new Set<string>()): Set<string> {
  if (typeof schema !== 'object' || schema === null) return names;
  const { properties, patternProperties } = schema as {
    properties?: Record<string, unknown>;
    patternProperties?: Record<string, unknown>;
  };
  for (const [name, inner] of Object.entries(properties ?? {})) {
    names.add(name);
    propertyNames(inner, names);
  }
  for (const inner of Object.values(patternProperties ?? {})) propertyNames(inner, names);
  return names;
}

/** Every setting name of the config file, at whatever level it belongs: read off its schema. */
const SETTINGS = [...propertyNames(ConfigFileSchema)];
/** Settings that hold secrets: nothing inside them is ever named in a message. */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set(['secrets', 'secret', 'verifyToken']);
/** The setting whose name `key` is, in any case, or misspells by one letter (undefined: none). */
export function settingNamed(key: string): string | undefined {
  return key.length > 40 ? undefined : nearestWithin(key, SETTINGS, 1);
}

/**
 * A source's settings whose unknown keys may be secrets typed without a key
 * (`verify: { scheme: github, secrets: [a], S3CRET }`): such a key is named
 * only when it is a setting's name, or nearly one (a typo).
 */
const HOLD_SECRETS: ReadonlySet<string> = new Set(['verify', 'handshake']);

/** How the providers' secrets and tokens begin (Stripe, Slack, GitHub, Shopify...). */
const SECRET_PREFIXES = /^(whsec_|sk_|rk_|pk_|xox|ghp_|gho_|ghs_|github_pat_|shp)/i;

/**
 * Whether a message may name an unknown key found at `parent` (its key path,
 * such as `sources.stripe.verify`):
 * - never inside a secret setting;
 * - a setting's name, or nearly one (a typo), always;
 * - inside `verify` and `handshake`, nothing else;
 * - elsewhere, a key that reads as a word: letters, `_` and `-`, at most 24
 *   characters, not beginning as a provider's secret does. A secret typed
 *   without its key at any level (`stripe: { verify: {…}, whsec_… }`) has
 *   digits, is longer or has such a prefix, and is described by its length;
 *   a misplaced word (`colour`, `burst`) is named, as the contract asks of a
 *   bad key.
 */
export function mayName(parent: string, key: string): boolean {
  const keys = parent.split('.');
  if (keys.some((name) => SECRET_SETTINGS.has(name))) return false;
  if (settingNamed(key) !== undefined) return true;
  // Any segment: a source's name may be written `sources["a b"]` in the path. (A source named `verify` errs on the safe side.)
  if (keys.some((name) => HOLD_SECRETS.has(name))) return false;
  return /^[A-Za-z][A-Za-z_-]{0,23}$/.test(key) && !SECRET_PREFIXES.test(key);
}

/** `parent.key`, or `parent["key"]` (escaped for a terminal) for a key that is not a plain word. */
export function childPath(parent: string, key: string): string {
  if (/^[\w-]+$/.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${escapeJsonForTerminal(JSON.stringify(key))}]`;
}
