import { decodeHex, hmac, matchingKey } from './constant-time.js';
import { checkSecrets, fail, headerValue, pass, type Verifier, type VerifyInput, type VerifyResult } from './verifier.js';

export interface GitHubOptions {
  secrets: readonly string[];
}

const PREFIX = 'sha256=';

/**
 * GitHub (and Meta, which signs the same way): `X-Hub-Signature-256:
 * sha256=<hex>`, an HMAC-SHA256 of the raw body. The SHA-1 header
 * `X-Hub-Signature` is never consulted, so a request cannot downgrade to it.
 * No timestamp. The delivery id is `X-GitHub-Delivery`, kept on redelivery.
 */
export class GitHubVerifier implements Verifier {
  readonly scheme = 'github';
  private readonly secrets: readonly string[];

  constructor(options: GitHubOptions) {
    this.secrets = checkSecrets(options.secrets);
  }

  verify(input: VerifyInput): VerifyResult {
    const header = headerValue(input.headers, 'x-hub-signature-256');
    if (header === undefined) return fail('missing_signature');
    if (!header.startsWith(PREFIX)) return fail('malformed_signature');
    const candidate = decodeHex(header.slice(PREFIX.length));
    if (candidate === undefined) return fail('malformed_signature');
    const index = matchingKey(this.secrets, [candidate], (secret) => hmac('sha256', secret, input.raw));
    if (index === -1) return fail('signature_mismatch');
    return pass(index, headerValue(input.headers, 'x-github-delivery'));
  }
}
