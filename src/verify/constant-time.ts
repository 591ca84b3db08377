import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacAlgorithm } from './verify-config-schema.js';

/**
 * Compares two byte strings in time that depends only on their length.
 * Different lengths answer false at once (a signature's length is fixed by
 * its algorithm and is no secret); it never throws, unlike
 * `crypto.timingSafeEqual`.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * Decodes hex strictly: an even number of hex digits and nothing else.
 * `Buffer.from(text, 'hex')` would stop at the first bad character, so a
 * valid signature with `zz` appended would decode to the valid bytes.
 */
export function decodeHex(text: string): Buffer | undefined {
  return HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes standard padded base64 strictly: the alphabet, padding only at the
 * end, and the canonical form (unused bits zero), so that exactly one text
 * decodes to given bytes. Node's decoder skips junk silently.
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length === 0 || !BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

export type { HmacAlgorithm };

/** HMAC over the parts in order, as if they were one byte string. */
export function hmac(algorithm: HmacAlgorithm, key: string | Uint8Array, ...parts: Array<string | Uint8Array>): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * The index of the first key that signs one of the candidates, or -1. `sign`
 * answers the signature a key gives, or several when the scheme allows more
 * than one signed form (Twilio's URL with and without its port). Every
 * comparison is constant-time; which key matched is no secret.
 */
export function matchingKey<K>(
  keys: readonly K[],
  candidates: readonly Uint8Array[],
  sign: (key: K) => Uint8Array | readonly Uint8Array[],
): number {
  for (let index = 0; index < keys.length; index += 1) {
    const signed = sign(keys[index] as K);
    const expected = signed instanceof Uint8Array ? [signed] : signed;
    for (const one of expected) {
      for (const candidate of candidates) {
        if (constantTimeEqual(candidate, one)) return index;
      }
    }
  }
  return -1;
}
