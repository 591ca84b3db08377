import { jsonStringField } from './body-id.js';
import { verifyV0 } from './v0-signature.js';
import { checkSecrets, checkTolerance, fail, pass, type Verifier, type VerifyInput, type VerifyResult } from './verifier.js';

export interface SlackOptions {
  /** The app's signing secret. */
  secrets: readonly string[];
  toleranceSeconds?: number;
}

const HEADERS = { signature: 'x-slack-signature', timestamp: 'x-slack-request-timestamp' };

/**
 * Slack: `X-Slack-Signature: v0=<hex>` over `v0:{ts}:{raw body}` with
 * `X-Slack-Request-Timestamp`, within 5 minutes either way. The delivery id
 * is the Events API `event_id` in a JSON body (slash commands and
 * interactions carry none).
 */
export class SlackVerifier implements Verifier {
  readonly scheme = 'slack';
  private readonly secrets: readonly string[];
  private readonly toleranceSeconds: number;

  constructor(options: SlackOptions) {
    this.secrets = checkSecrets(options.secrets);
    this.toleranceSeconds = checkTolerance(options.toleranceSeconds);
  }

  verify(input: VerifyInput): VerifyResult {
    const result = verifyV0(input, HEADERS, this.secrets, this.toleranceSeconds);
    if ('reason' in result) return fail(result.reason);
    return pass(result.secretIndex, jsonStringField(input.raw, 'event_id'));
  }
}
