// Why a delivery failed verification, as a code and as the sentence its
// sender is answered with. No Node imports: the web page shows the same
// sentence for a delivery kept as failed (web/src/detail-view.ts).

/**
 * Why a delivery failed verification: a short code for logs and metrics. It
 * never carries the secret or the signature.
 */
export type VerifyFailure =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'missing_timestamp'
  | 'malformed_timestamp'
  | 'timestamp_outside_tolerance'
  | 'missing_id'
  | 'malformed_body'
  | 'missing_body_hash'
  | 'body_hash_mismatch';

/**
 * Each failure in words, for the sender's answer: what to look at, never a
 * secret or the signature expected.
 */
export const FAILURE_TEXT: Readonly<Record<VerifyFailure, string>> = {
  missing_signature: 'the request carries no signature header',
  malformed_signature: 'the signature header is not in the form this scheme uses',
  signature_mismatch:
    "no signature matches any of this source's secrets (check the secret, and that the body reached Reception unchanged)",
  missing_timestamp: 'the request carries no timestamp',
  malformed_timestamp: 'the timestamp is not a whole number of seconds',
  timestamp_outside_tolerance: 'the timestamp is outside the tolerance (an old delivery replayed, or a clock that is off)',
  missing_id: 'the request carries no message id header',
  malformed_body: 'the form body cannot be decoded',
  missing_body_hash: 'a body other than form data needs bodySHA256 in the URL',
  body_hash_mismatch: 'the body does not match the bodySHA256 in the URL',
};

/**
 * The sentence a sender gets for a failed check (the detail of its
 * `401 signature_invalid`), from the scheme and the failure's code; a code
 * this version does not know reads as a mismatch.
 */
export function failureSentence(scheme: string | undefined, reason: string | undefined): string {
  const text =
    reason !== undefined && Object.hasOwn(FAILURE_TEXT, reason)
      ? FAILURE_TEXT[reason as VerifyFailure]
      : 'the signature does not match';
  return `The ${scheme ?? ''} signature check failed: ${text}.`;
}
