import { decodeBase64, decodeHex, hmac, matchingKey } from './constant-time.js';
import {
  VerifyConfigError,
  checkSecrets,
  fail,
  headerValue,
  pass,
  type Verifier,
  type VerifyInput,
  type VerifyResult,
} from './verifier.js';
import { HMAC_ALGORITHMS, HMAC_ENCODINGS, type HmacAlgorithm, type HmacEncoding } from './verify-config-schema.js';

export interface GenericHmacOptions {
  secrets: readonly string[];
  /** The header that carries the signature, such as `X-Signature`. */
  header: string;
  /** sha256 when absent. */
  algorithm?: string;
  /** hex when absent. */
  encoding?: string;
  /** Text before the signature in the header, such as `sha256=`; none when absent. */
  prefix?: string;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Any sender that puts an HMAC of the raw body in one header: the header
 * value is `prefix` followed by the digest in `encoding`. No timestamp and no
 * delivery id (a source may name a dedup header of its own).
 */
export class GenericHmacVerifier implements Verifier {
  readonly scheme = 'hmac';
  private readonly secrets: readonly string[];
  private readonly header: string;
  private readonly algorithm: HmacAlgorithm;
  private readonly encoding: HmacEncoding;
  private readonly prefix: string;

  constructor(options: GenericHmacOptions) {
    this.secrets = checkSecrets(options.secrets);
    if (typeof options.header !== 'string' || !HEADER_NAME.test(options.header)) {
      throw new VerifyConfigError('header', 'hmac needs header, the name of the header that carries the signature');
    }
    this.header = options.header.toLowerCase();
    this.algorithm = oneOf('algorithm', options.algorithm ?? 'sha256', HMAC_ALGORITHMS);
    this.encoding = oneOf('encoding', options.encoding ?? 'hex', HMAC_ENCODINGS);
    if (options.prefix !== undefined && typeof options.prefix !== 'string') {
      throw new VerifyConfigError('prefix', 'expected a string');
    }
    this.prefix = options.prefix ?? '';
  }

  verify(input: VerifyInput): VerifyResult {
    const header = headerValue(input.headers, this.header);
    if (header === undefined) return fail('missing_signature');
    if (!header.startsWith(this.prefix)) return fail('malformed_signature');
    const encoded = header.slice(this.prefix.length);
    const candidate = this.encoding === 'hex' ? decodeHex(encoded) : decodeBase64(encoded);
    if (candidate === undefined) return fail('malformed_signature');
    const index = matchingKey(this.secrets, [candidate], (secret) => hmac(this.algorithm, secret, input.raw));
    if (index === -1) return fail('signature_mismatch');
    return pass(index, undefined);
  }
}

function oneOf<T extends string>(key: string, value: unknown, allowed: readonly T[]): T {
  const found = allowed.find((each) => each === value);
  if (found === undefined) {
    throw new VerifyConfigError(key, `expected one of ${allowed.join(', ')}`);
  }
  return found;
}
