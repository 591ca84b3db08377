import { decodeHex, hmac, matchingKey } from './constant-time.js';
import { timestampFailure } from './timestamp.js';
import { headerValue, type VerifyInput, type VerifyFailure } from './verifier.js';

export interface V0Headers {
  signature: string;
  timestamp: string;
}

/**
 * The `v0` signature that Slack and Zoom share: a signature header
 * `v0=<hex>` holding an HMAC-SHA256 of `v0:{timestamp}:{raw body}`, and a
 * timestamp header in seconds. Answers the index of the matching secret, or
 * the failure.
 */
export function verifyV0(
  input: VerifyInput,
  names: V0Headers,
  secrets: readonly string[],
  toleranceSeconds: number,
): { secretIndex: number } | { reason: VerifyFailure } {
  const header = headerValue(input.headers, names.signature);
  if (header === undefined) return { reason: 'missing_signature' };
  const timestamp = headerValue(input.headers, names.timestamp);
  const late = timestampFailure(timestamp, input.nowMs, toleranceSeconds);
  if (late !== undefined || timestamp === undefined) return { reason: late ?? 'missing_timestamp' };
  if (!header.startsWith('v0=')) return { reason: 'malformed_signature' };
  const candidate = decodeHex(header.slice(3));
  if (candidate === undefined) return { reason: 'malformed_signature' };
  const index = matchingKey(secrets, [candidate], (secret) => hmac('sha256', secret, `v0:${timestamp}:`, input.raw));
  return index === -1 ? { reason: 'signature_mismatch' } : { secretIndex: index };
}
