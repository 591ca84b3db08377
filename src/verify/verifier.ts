import type { IncomingHttpHeaders } from 'node:http';
import type { VerifyFailure } from './failure-text.js';

export { FAILURE_TEXT, type VerifyFailure } from './failure-text.js';

/**
 * Glossary for this folder:
 * - scheme: how one provider signs its deliveries (which headers, which bytes,
 *   which HMAC and encoding).
 * - secret: a key the operator configured; a source lists one or more, and a
 *   delivery passes when any of them matches (rotation).
 * - candidate: one signature the request carries; some schemes carry several
 *   (Stripe's `v1=` entries, Standard Webhooks' space-separated list), and a
 *   delivery passes when any candidate matches.
 * - delivery id: the provider's id for a delivery, kept across its retries,
 *   used for deduplication.
 */

/** What a verifier sees of a request: bytes and headers as they arrived. */
export interface VerifyInput {
  /** The body exactly as received. */
  raw: Buffer;
  /** Header names in lower case, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** The request's own query string, without the leading `?` ('' when none). */
  query: string;
  /** The Content-Type header value ('' when none). */
  contentType: string;
  /** The time to judge timestamps against, in milliseconds since the epoch. */
  nowMs: number;
}

export type VerifyResult =
  /**
   * `secretIndex` is the position in the configured list of the secret that
   * matched (0 is the first), so that a rotation can tell when the old secret
   * stops being used. `deliveryId` is the provider's delivery id, when the
   * scheme carries one.
   */
  { ok: true; secretIndex: number; deliveryId?: string } | { ok: false; reason: VerifyFailure };

export interface Verifier {
  readonly scheme: string;
  verify(input: VerifyInput): VerifyResult;
}

/** A bad verifier option; `key` names it as it appears under `verify` in the config. */
export class VerifyConfigError extends Error {
  readonly key: string;

  constructor(key: string, message: string) {
    super(`verify.${key}: ${message}`);
    this.name = 'VerifyConfigError';
    this.key = key;
  }
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

export function fail(reason: VerifyFailure): VerifyResult {
  return { ok: false, reason };
}

export function pass(secretIndex: number, deliveryId: string | undefined): VerifyResult {
  return deliveryId === undefined ? { ok: true, secretIndex } : { ok: true, secretIndex, deliveryId };
}

/**
 * One header's value, trimmed; several lines of the same header (which Node
 * gives as an array only for a few names) are joined with `, ` as Node joins
 * the others. An empty value counts as absent.
 */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** Checks the configured secrets: at least one, each a non-empty string. */
export function checkSecrets(secrets: unknown): readonly string[] {
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new VerifyConfigError('secrets', 'expected a list of at least one secret');
  }
  return secrets.map((secret: unknown, index: number) => {
    if (typeof secret !== 'string' || secret.length === 0) {
      throw new VerifyConfigError(`secrets[${index}]`, 'expected a non-empty string');
    }
    return secret;
  });
}

/** Checks a timestamp tolerance: a positive number of seconds, 300 when absent. */
export function checkTolerance(toleranceSeconds: number | undefined): number {
  if (toleranceSeconds === undefined) return DEFAULT_TOLERANCE_SECONDS;
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds <= 0) {
    throw new VerifyConfigError('toleranceSeconds', 'expected a positive number of seconds');
  }
  return toleranceSeconds;
}
