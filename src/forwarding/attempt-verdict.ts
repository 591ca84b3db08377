import { budgetSpent } from './outbox/forward-row.js';
import type { AttemptOutcome, AttemptTransform, ClaimedForward } from './outbox/outbox.js';
import { backoffMs } from './backoff.js';
import { budgetOf, type Destination } from './destination.js';
import type { PublishResult } from './publishers/publisher.js';

/** What one attempt comes to: the forward's next state, and the line logged for it. */
export interface AttemptVerdict {
  next: AttemptOutcome['next'];
  /** The metric's outcome label: `retry` while the forward waits for another attempt. */
  outcome: 'retry' | 'succeeded' | 'failed' | 'cancelled';
  level: 'info' | 'warn';
  line: Record<string, unknown>;
  message: string;
}

/**
 * Decides what an attempt's result makes of its forward (CONTRACT 6, 10):
 * settled by its transform (dropped: cancelled; cannot run: failed), a
 * success, failed for good (a refusal that can never succeed, or its budget
 * spent), or pending again after the backoff or the destination's
 * `Retry-After` (capped at `retry.maxMs`).
 */
export function attemptVerdict(
  destination: Destination,
  { forward, delivery }: ClaimedForward,
  result: PublishResult,
  transform: AttemptTransform | null,
  timing: { now: number; durationMs: number },
  settled?: 'cancelled' | 'failed',
): AttemptVerdict {
  const { now, durationMs } = timing;
  let next: AttemptOutcome['next'];
  if (settled !== undefined) next = { state: settled };
  else if (result.ok) next = { state: 'succeeded' };
  // What can never succeed (the guard's refusal) fails at once (CONTRACT 6): only a config change can fix it.
  else if (result.permanent === true || budgetSpent(forward, budgetOf(destination), now)) next = { state: 'failed' };
  else {
    const wait =
      result.retryAfterMs === undefined
        ? backoffMs(forward.budgetUsed, destination.retry.initialMs, destination.retry.maxMs)
        : Math.min(result.retryAfterMs, destination.retry.maxMs);
    next = { state: 'pending', at: now + wait };
  }
  const outcome = next.state === 'pending' ? 'retry' : next.state;
  const line = {
    destination: destination.name,
    forwardId: forward.id,
    deliveryId: delivery.id,
    source: delivery.source,
    attempt: forward.attemptCount,
    status: result.status,
    ms: durationMs,
    outcome,
    ...(result.error === null ? {} : { error: result.error }),
    ...(transform === null ? {} : { transform: `${transform.name}@${transform.version}` }),
    ...(next.state === 'pending' ? { nextAttemptAt: new Date(next.at).toISOString() } : {}),
  };
  if (result.ok) return { next, outcome, line, level: 'info', message: 'forward attempt' };
  if (next.state === 'cancelled')
    return { next, outcome, line, level: 'info', message: 'forward dropped by its transform: nothing sent' };
  const message =
    settled === 'failed'
      ? 'forward failed: its transform could not run (not retried)'
      : next.state !== 'failed'
        ? 'forward attempt failed'
        : result.permanent === true
          ? 'forward failed: it can never succeed as configured (not retried)'
          : 'forward failed: its retries are spent';
  return { next, outcome, line, level: 'warn', message };
}
