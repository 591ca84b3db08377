import type { Transforms } from '../transforms/transforms.js';
import type { TransformOutput } from '../transforms/transform-output.js';
import type { AttemptTransform, ClaimedForward } from './outbox/outbox.js';
import { NO_ISSUE_SIGNALS, type IssueSignals } from '../issues/issue-signals.js';

/**
 * What an attempt does after its forward's transform ran (CONTRACT 10 "Out"):
 * send the reshaped forward, or settle it without sending (`cancelled` when
 * the transform dropped it, `failed` when it could not run).
 */
export type TransformStep =
  | { send: ClaimedForward; transform: AttemptTransform | null }
  | { settle: 'cancelled' | 'failed'; error: string; transform: AttemptTransform | null }
  | { aborted: string };

/**
 * Runs the forward's transform (the one of that name in force now, so that a
 * reload applies to retries) on its delivery, off the event loop, and answers
 * what the attempt does next. A forward without a transform is sent as it is.
 * A transform that cannot run (it throws, times out, gives bad output, or is
 * gone) is an occurrence of `transform_failing` on its name (CONTRACT 11).
 */
export async function transformAttempt(
  claimed: ClaimedForward,
  transforms: Transforms | undefined,
  issues: IssueSignals = NO_ISSUE_SIGNALS,
): Promise<TransformStep> {
  const name = claimed.forward.transform;
  if (name === null) return { send: claimed, transform: null };
  const result = await transforms?.runOnDelivery(name, claimed.delivery);
  // Shutting down: the run's error is not the transform's; the attempt fails as an aborted one does, to be retried.
  if (transforms?.closed === true) return { aborted: 'aborted: Reception is shutting down' };
  if (result === undefined) {
    const error = `transform_failed: unknown transform ${name}`;
    issues.occurred('transform_failing', name, error);
    return { settle: 'failed', error, transform: null };
  }
  if ('error' in result) {
    issues.occurred('transform_failing', name, result.error);
    return { settle: 'failed', error: `transform_failed: ${result.error}`, transform: result.transform };
  }
  if (result.output === null) return { settle: 'cancelled', error: `dropped by transform ${name}`, transform: result.transform };
  return { send: reshaped(claimed, result.output), transform: result.transform };
}

/**
 * The forward as its transform's output reshapes it: a string body as UTF-8
 * with the original Content-Type, any other body as JSON
 * (`content-type: application/json`), no body the raw bytes; the output's
 * headers (lower-case names, reserved ones already refused) in
 * `transformHeaders`, to add to or replace what the publisher sends.
 */
export function reshaped(claimed: ClaimedForward, output: TransformOutput): ClaimedForward {
  const { delivery } = claimed;
  const headers: Record<string, string> = {};
  let raw = delivery.raw;
  if (typeof output.body === 'string') raw = Buffer.from(output.body, 'utf8');
  else if (output.body !== undefined) {
    raw = Buffer.from(JSON.stringify(output.body), 'utf8');
    headers['content-type'] = 'application/json';
  }
  Object.assign(headers, output.headers ?? {});
  const contentType = headers['content-type'] ?? delivery.contentType;
  return { ...claimed, delivery: { ...delivery, raw, contentType }, transformHeaders: headers };
}
