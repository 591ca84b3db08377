import { decodeBase64, hmac, matchingKey } from './constant-time.js';
import { timestampFailure } from './timestamp.js';
import {
  VerifyConfigError,
  checkSecrets,
  checkTolerance,
  fail,
  headerValue,
  pass,
  type Verifier,
  type VerifyInput,
  type VerifyResult,
} from './verifier.js';

export interface StandardWebhooksOptions {
  /** Secrets as `whsec_` followed by the base64 key (the prefix may be left off). */
  secrets: readonly string[];
  toleranceSeconds?: number;
}

const SECRET_PREFIX = 'whsec_';

/**
 * Standard Webhooks (and Svix, whose headers are `svix-*`): `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`, the signature a space-separated
 * list of `v1,<base64>` entries, each an HMAC-SHA256 of
 * `{id}.{timestamp}.{raw body}` keyed by the base64-decoded secret. Entries
 * of other versions (`v1a` is asymmetric) are skipped. The timestamp must be
 * within the tolerance either way. The delivery id is the message id.
 */
export class StandardWebhooksVerifier implements Verifier {
  readonly scheme = 'standard-webhooks';
  private readonly keys: readonly Buffer[];
  private readonly toleranceSeconds: number;

  constructor(options: StandardWebhooksOptions) {
    this.keys = checkSecrets(options.secrets).map((secret, index) => decodeSecret(secret, index));
    this.toleranceSeconds = checkTolerance(options.toleranceSeconds);
  }

  verify(input: VerifyInput): VerifyResult {
    const header = standardHeader(input, 'signature');
    if (header === undefined) return fail('missing_signature');
    const id = standardHeader(input, 'id');
    if (id === undefined) return fail('missing_id');
    const timestamp = standardHeader(input, 'timestamp');
    const late = timestampFailure(timestamp, input.nowMs, this.toleranceSeconds);
    if (late !== undefined || timestamp === undefined) return fail(late ?? 'missing_timestamp');
    const candidates = v1Signatures(header);
    if (candidates.length === 0) return fail('malformed_signature');
    const index = matchingKey(this.keys, candidates, (key) => hmac('sha256', key, `${id}.${timestamp}.`, input.raw));
    if (index === -1) return fail('signature_mismatch');
    return pass(index, id);
  }
}

/** `webhook-<name>`, else `svix-<name>`. */
function standardHeader(input: VerifyInput, name: string): string | undefined {
  return headerValue(input.headers, `webhook-${name}`) ?? headerValue(input.headers, `svix-${name}`);
}

/**
 * The decodable `v1` signatures of the list. Entries are separated by spaces;
 * a comma before the space is dropped too, because two header lines arrive
 * joined with `, ` (a base64 signature never holds a comma).
 */
function v1Signatures(header: string): Buffer[] {
  const signatures: Buffer[] = [];
  for (const entry of header.split(/,?\s+/)) {
    const comma = entry.indexOf(',');
    if (comma === -1 || entry.slice(0, comma) !== 'v1') continue;
    const bytes = decodeBase64(entry.slice(comma + 1).replace(/,$/, ''));
    if (bytes !== undefined) signatures.push(bytes);
  }
  return signatures;
}

/**
 * The key of a secret, `whsec_` (which may be left off) followed by base64
 * decoded as the standardwebhooks library decodes it: at least four
 * characters, padding optional (at most two `=`), unused trailing bits
 * ignored. Senders' dashboards show canonical keys, but a key copied without
 * its padding still works with the sender's own library, so it works here.
 * Answers undefined when the secret is not such a key.
 */
export function decodeSecretKey(secret: string): Buffer | undefined {
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (text.length < 4 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  if (text.replace(/=+$/, '').length % 4 === 1) return undefined;
  const key = Buffer.from(text, 'base64');
  return key.length === 0 ? undefined : key;
}

function decodeSecret(secret: string, index: number): Buffer {
  const key = decodeSecretKey(secret);
  if (key === undefined) {
    throw new VerifyConfigError(`secrets[${index}]`, 'expected `whsec_` followed by a base64 key, as the sender shows it');
  }
  return key;
}
