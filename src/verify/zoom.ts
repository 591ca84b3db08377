import { verifyV0 } from './v0-signature.js';
import { checkSecrets, checkTolerance, fail, pass, type Verifier, type VerifyInput, type VerifyResult } from './verifier.js';

export interface ZoomOptions {
  /** The app's secret token. */
  secrets: readonly string[];
  toleranceSeconds?: number;
}

const HEADERS = { signature: 'x-zm-signature', timestamp: 'x-zm-request-timestamp' };

/**
 * Zoom: `x-zm-signature: v0=<hex>` over `v0:{ts}:{raw body}` keyed by the
 * secret token, with `x-zm-request-timestamp`, within 5 minutes either way.
 * Zoom sends no delivery id.
 */
export class ZoomVerifier implements Verifier {
  readonly scheme = 'zoom';
  private readonly secrets: readonly string[];
  private readonly toleranceSeconds: number;

  constructor(options: ZoomOptions) {
    this.secrets = checkSecrets(options.secrets);
    this.toleranceSeconds = checkTolerance(options.toleranceSeconds);
  }

  verify(input: VerifyInput): VerifyResult {
    const result = verifyV0(input, HEADERS, this.secrets, this.toleranceSeconds);
    if ('reason' in result) return fail(result.reason);
    return pass(result.secretIndex, undefined);
  }
}
