import { jsonStringField } from './body-id.js';
import { decodeHex, hmac, matchingKey } from './constant-time.js';
import { timestampFailure } from './timestamp.js';
import {
  checkSecrets,
  checkTolerance,
  fail,
  headerValue,
  pass,
  type Verifier,
  type VerifyInput,
  type VerifyResult,
} from './verifier.js';

export interface StripeOptions {
  /** Endpoint signing secrets (`whsec_…`), used whole as the HMAC key. */
  secrets: readonly string[];
  toleranceSeconds?: number;
}

/**
 * Stripe: `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>…]`, each `v1` an
 * HMAC-SHA256 of `{t}.{raw body}`. Other schemes (`v0`) are ignored. The
 * delivery id is the event's `id` in the body, which Stripe keeps on retries.
 */
export class StripeVerifier implements Verifier {
  readonly scheme = 'stripe';
  private readonly secrets: readonly string[];
  private readonly toleranceSeconds: number;

  constructor(options: StripeOptions) {
    this.secrets = checkSecrets(options.secrets);
    this.toleranceSeconds = checkTolerance(options.toleranceSeconds);
  }

  verify(input: VerifyInput): VerifyResult {
    const header = headerValue(input.headers, 'stripe-signature');
    if (header === undefined) return fail('missing_signature');
    const parsed = parseStripeHeader(header);
    if (parsed === undefined) return fail('malformed_signature');
    const { timestamp, signatures } = parsed;
    if (timestamp === undefined) return fail('missing_timestamp');
    const late = timestampFailure(timestamp, input.nowMs, this.toleranceSeconds);
    if (late !== undefined) return fail(late);
    if (signatures.length === 0) return fail('missing_signature');
    const candidates = decodeAll(signatures);
    if (candidates.length === 0) return fail('malformed_signature');
    const index = matchingKey(this.secrets, candidates, (secret) => hmac('sha256', secret, `${timestamp}.`, input.raw));
    if (index === -1) return fail('signature_mismatch');
    return pass(index, jsonStringField(input.raw, 'id'));
  }
}

interface StripeHeader {
  timestamp: string | undefined;
  signatures: string[];
}

/**
 * Splits the header into its `t` and `v1` entries. Entries are separated by
 * commas (spaces around them are allowed, so two header lines joined with
 * `, ` still parse). A header with two different `t` is malformed.
 */
function parseStripeHeader(header: string): StripeHeader | undefined {
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const entry = item.trim();
    const equals = entry.indexOf('=');
    if (equals === -1) continue;
    const key = entry.slice(0, equals);
    const value = entry.slice(equals + 1);
    if (key === 't') {
      if (timestamp !== undefined && timestamp !== value) return undefined;
      timestamp = value;
    } else if (key === 'v1') {
      signatures.push(value);
    }
  }
  return { timestamp, signatures };
}

function decodeAll(signatures: readonly string[]): Buffer[] {
  const decoded: Buffer[] = [];
  for (const signature of signatures) {
    const bytes = decodeHex(signature);
    if (bytes !== undefined) decoded.push(bytes);
  }
  return decoded;
}
