import { escapeJsonForTerminal } from '../text/terminal-safe.js';
import { ConfigFileSchema } from './source-config-schema.js';

/** The names of the properties a JSON schema and the schemas inside it declare. */
function propertyNames(schema: unknown, names = new Set<string>()): Set<string> {
  if (typeof schema !== 'object' || schema === null) return names;
  const { properties, patternProperties } = schema as { properties?: Record<string, unknown>; patternProperties?: Record<string, unknown> };
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
/**
 * A source's settings whose unknown keys may be secrets typed without a key
 * (`verify: { scheme: github, secrets: [a], S3CRET }`): such a key is named
 * only when it is a setting's name, or nearly one (a typo).
 */
const HOLD_SECRETS: ReadonlySet<string> = new Set(['verify', 'handshake']);

/** The setting whose name `key` is, in any case, or misspells by one letter (undefined: none). */
export function settingNamed(key: string): string | undefined {
  if (key.length > 40) return undefined;
  let best: string | undefined;
  let bestDistance = 2;
  for (const name of SETTINGS) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Whether a message may name an unknown key found at `parent` (a source's
 * key path inside it, such as `verify`): never inside a secret setting;
 * inside `verify` and `handshake` only a setting's name or a near miss of
 * one; elsewhere always.
 */
export function mayName(parent: string, key: string): boolean {
  const keys = parent.split('.');
  if (keys.some((name) => SECRET_SETTINGS.has(name))) return false;
  return !HOLD_SECRETS.has(keys[0] ?? '') || settingNamed(key) !== undefined;
}

/** `parent.key`, or `parent["key"]` (escaped for a terminal) for a key that is not a plain word. */
export function childPath(parent: string, key: string): string {
  if (/^[\w-]+$/.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${escapeJsonForTerminal(JSON.stringify(key))}]`;
}

/** Levenshtein distance (keys are short: at most 40 characters here). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
