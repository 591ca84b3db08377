import { describe, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { INTERRUPTED } from '../../src/forwarding/outbox/sqlite-release-interrupted.js';
import { freshStoreEachTest, sqliteFixture } from '../helpers/store-fixtures.js';
import {
  BUDGET,
  claim,
  deliverAll,
  forward,
  forwardOf,
  LEASE_MS,
  T0,
} from '../../src/forwarding/outbox/contract/outbox-contract-support.js';

/**
 * CONTRACT 6 "After a crash" (2026-11-27), SQLite: one process owns the
 * inbox, so at start every forward still `delivering` was caught by the end
 * of the last one; it is attempted again at once, not when its lease would
 * have run out.
 */
describe('SqliteOutbox.releaseInterrupted (at start)', () => {
  const store = freshStoreEachTest(sqliteFixture) as () => SqliteStore;

  it('records each interrupted attempt as failed and makes the forward pending at once, push and pull leases alike', async () => {
    const [pushed, pulled, idle] = await deliverAll(store(), [{}, {}, {}]);
    await claim(store(), T0, { max: 1, owner: 'the-instance-that-died' });
    await claim(store(), T0 + 5, { max: 1 });
    const now = T0 + 1000;
    expect(store().outbox.releaseInterrupted(now, () => BUDGET)).toBe(2);
    for (const [delivered, startedAt] of [
      [pushed, T0],
      [pulled, T0 + 5],
    ] as const) {
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'pending',
        nextAttemptAt: now,
        leaseUntil: null,
        attemptCount: 1,
        lastError: INTERRUPTED,
      });
      const [withAttempts] = await store().outbox.forwardsOf(delivered?.id ?? '');
      expect(withAttempts?.attempts).toEqual([
        { n: 1, startedAt, durationMs: now - startedAt, status: null, error: INTERRUPTED, response: null, transform: null },
      ]);
    }
    expect(await forward(store(), forwardOf(idle))).toMatchObject({ status: 'pending', attemptCount: 0 });
    // Claimable at once, long before the lease would have run out.
    expect(await claim(store(), now, { max: 10 })).toHaveLength(3);
    expect(now).toBeLessThan(T0 + LEASE_MS);
    expect((await store().outbox.destinations()).find((d) => d.name === 'app')).toMatchObject({ lastError: INTERRUPTED });
  });

  it('makes the forward failed when the interrupted attempt spent its budget, and does nothing with nothing delivering', async () => {
    const [delivered, other] = await deliverAll(store(), [{}, {}]);
    await claim(store(), T0, { owner: 'x', max: 2 });
    const told: unknown[] = [];
    const stop = store().outbox.onDeadLetters((letters) => told.push(...letters));
    // The first forward's attempt spent its budget; the other's did not.
    const budgets = [{ attempts: 1, maxAgeMs: 3_600_000 }, BUDGET];
    expect(store().outbox.releaseInterrupted(T0 + 10, () => budgets.shift() ?? BUDGET)).toBe(2);
    const statuses = [await forward(store(), forwardOf(delivered)), await forward(store(), forwardOf(other))].map(
      (f) => f?.status,
    );
    expect(statuses.sort()).toEqual(['failed', 'pending']);
    // The failed one is a dead letter, told as any other (docs/alerts.md), once.
    expect(told).toEqual([{ destination: 'app', error: INTERRUPTED }]);
    expect(store().outbox.releaseInterrupted(T0 + 20, () => BUDGET)).toBe(0);
    expect(told).toHaveLength(1);
    stop();
  });
});
