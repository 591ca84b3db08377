import { describe, expect, it } from 'vitest';
import { attemptVerdict } from '../../../src/forwarding/attempt-verdict.js';
import { resolveDestination } from '../../../src/forwarding/destination.js';
import type { ClaimedForward, Forward } from '../../../src/forwarding/outbox/outbox.js';
import { newDelivery } from '../../helpers/delivery-factory.js';

const NOW = Date.UTC(2026, 10, 28, 6, 0, 0);
const destination = resolveDestination('app', {
  url: 'https://app.example/hooks',
  retry: { attempts: 3, initialMs: 1000, maxMs: 60_000 },
});

function claimed(attempt: number): ClaimedForward {
  const delivery = { ...newDelivery(), forwards: [], seq: 1, eventType: null };
  const forward: Forward = {
    id: 'f1',
    position: 1,
    deliveryId: delivery.id,
    deliverySeq: 1,
    source: delivery.source,
    destination: 'app',
    status: 'delivering',
    attemptCount: attempt,
    budgetUsed: attempt,
    budgetStartedAt: NOW - 1000,
    nextAttemptAt: NOW + 30_000,
    leaseUntil: NOW + 30_000,
    lease: 'l1',
    createdAt: NOW - 1000,
    updatedAt: NOW - 1000,
    lastStatus: null,
    lastError: null,
    transform: null,
  };
  return { forward, delivery };
}

const timing = { now: NOW, durationMs: 12 };
const failed = (extra: object = {}) => ({ ok: false, status: 500, error: 'HTTP 500', ...extra });

describe('what an attempt makes of its forward', () => {
  it('a success settles it, logged at info', () => {
    const verdict = attemptVerdict(destination, claimed(1), { ok: true, status: 204, error: null }, null, timing);
    expect(verdict).toMatchObject({
      next: { state: 'succeeded' },
      outcome: 'succeeded',
      level: 'info',
      message: 'forward attempt',
    });
    expect(verdict.line).toMatchObject({ destination: 'app', forwardId: 'f1', attempt: 1, status: 204, ms: 12 });
  });

  it('a failure with budget left waits for the backoff, or for Retry-After capped at maxMs', () => {
    const backoff = attemptVerdict(destination, claimed(1), failed(), null, timing);
    expect(backoff.outcome).toBe('retry');
    expect(backoff.next.state).toBe('pending');
    const at = backoff.next.state === 'pending' ? backoff.next.at : 0;
    expect(at - NOW).toBeGreaterThanOrEqual(0);
    expect(at - NOW).toBeLessThanOrEqual(1000);
    expect(backoff.line.nextAttemptAt).toBe(new Date(at).toISOString());
    expect(attemptVerdict(destination, claimed(1), failed({ retryAfterMs: 5000 }), null, timing).next).toEqual({
      state: 'pending',
      at: NOW + 5000,
    });
    expect(attemptVerdict(destination, claimed(1), failed({ retryAfterMs: 3_600_000 }), null, timing).next).toEqual({
      state: 'pending',
      at: NOW + 60_000,
    });
  });

  it('fails for good when the budget is spent or it can never succeed, each said differently', () => {
    expect(attemptVerdict(destination, claimed(3), failed(), null, timing)).toMatchObject({
      next: { state: 'failed' },
      level: 'warn',
      message: 'forward failed: its retries are spent',
    });
    expect(attemptVerdict(destination, claimed(1), failed({ permanent: true }), null, timing)).toMatchObject({
      next: { state: 'failed' },
      message: 'forward failed: it can never succeed as configured (not retried)',
    });
  });

  it('a transform settles it without sending: dropped is cancelled, one that cannot run fails at once', () => {
    const transform = { name: 'slack', version: 'abc123def456' };
    const dropped = attemptVerdict(
      destination,
      claimed(1),
      { ok: false, status: null, error: 'dropped by transform slack' },
      transform,
      timing,
      'cancelled',
    );
    expect(dropped).toMatchObject({
      next: { state: 'cancelled' },
      level: 'info',
      message: 'forward dropped by its transform: nothing sent',
    });
    expect(dropped.line.transform).toBe('slack@abc123def456');
    expect(attemptVerdict(destination, claimed(1), failed(), transform, timing, 'failed')).toMatchObject({
      next: { state: 'failed' },
      message: 'forward failed: its transform could not run (not retried)',
    });
  });
});
