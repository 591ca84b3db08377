import { decodeBase64, hmac, matchingKey } from './constant-time.js';
import { checkSecrets, fail, headerValue, pass, type Verifier, type VerifyInput, type VerifyResult } from './verifier.js';

export interface ShopifyOptions {
  /** The app's client secret (or the store's webhook signing secret). */
  secrets: readonly string[];
}

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>`, an HMAC-SHA256 of the raw
 * body. No timestamp. The delivery id is `X-Shopify-Webhook-Id`, kept on
 * retries.
 */
export class ShopifyVerifier implements Verifier {
  readonly scheme = 'shopify';
  private readonly secrets: readonly string[];

  constructor(options: ShopifyOptions) {
    this.secrets = checkSecrets(options.secrets);
  }

  verify(input: VerifyInput): VerifyResult {
    const header = headerValue(input.headers, 'x-shopify-hmac-sha256');
    if (header === undefined) return fail('missing_signature');
    const candidate = decodeBase64(header);
    if (candidate === undefined) return fail('malformed_signature');
    const index = matchingKey(this.secrets, [candidate], (secret) => hmac('sha256', secret, input.raw));
    if (index === -1) return fail('signature_mismatch');
    return pass(index, headerValue(input.headers, 'x-shopify-webhook-id'));
  }
}
