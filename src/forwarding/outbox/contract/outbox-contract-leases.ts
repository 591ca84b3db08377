import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { LEASE_EXPIRED } from '../forward-row.js';
import { claim, claimedOne, deliver, forward, forwardOf, ids, LEASE_MS, outcome, T0 } from './outbox-contract-support.js';

/** Leases: a claim that is never settled counts as a failed attempt once it runs out. */
export function describeLeaseContract(store: () => InboxDatabase): void {
  describe('leases', () => {
    it('keeps a leased forward from every other claim until the lease runs out', async () => {
      await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      expect(await claim(store(), T0 + LEASE_MS - 1)).toEqual([]);
      expect(await forward(store(), taken.id)).toMatchObject({ status: 'delivering', attemptCount: 1 });
    });

    it('turns an expired lease into a failed attempt (LEASE_EXPIRED) and lets the same claim take the forward at once', async () => {
      const delivered = await deliver(store());
      claimedOne(await claim(store(), T0 + 100));
      const expiry = T0 + 100 + LEASE_MS;
      const again = claimedOne(await claim(store(), expiry));
      expect(again).toMatchObject({
        id: forwardOf(delivered),
        status: 'delivering',
        attemptCount: 2,
        budgetUsed: 2,
        leaseUntil: expiry + LEASE_MS,
      });
      const [withAttempts] = await store().outbox.forwardsOf(delivered.id);
      expect(withAttempts?.attempts).toEqual([
        { n: 1, startedAt: T0 + 100, durationMs: LEASE_MS, status: null, error: LEASE_EXPIRED, response: null, transform: null },
      ]);
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')).toMatchObject({
        lastFailureAt: expiry,
        lastError: LEASE_EXPIRED,
      });
    });

    it('turns expired leases into attempts on a claim with max 0 (the sweep) and on a paused destination', async () => {
      const delivered = await deliver(store());
      claimedOne(await claim(store(), T0));
      await store().outbox.setPaused('app', true);
      expect(await claim(store(), T0 + LEASE_MS, { max: 0 })).toEqual([]);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'pending',
        nextAttemptAt: T0 + LEASE_MS,
        leaseUntil: null,
        attemptCount: 1,
        lastError: LEASE_EXPIRED,
      });
      expect(await claim(store(), T0 + LEASE_MS)).toEqual([]);
      await store().outbox.setPaused('app', false);
      expect(ids(await claim(store(), T0 + LEASE_MS))).toEqual(delivered.forwards);
    });

    it('makes the forward failed when the expired attempt was the last of its budget', async () => {
      const delivered = await deliver(store());
      const budget = { attempts: 2, maxAgeMs: 3_600_000 };
      claimedOne(await claim(store(), T0, { budget }));
      expect(claimedOne(await claim(store(), T0 + LEASE_MS, { budget })).attemptCount).toBe(2);
      expect(await claim(store(), T0 + 2 * LEASE_MS, { budget })).toEqual([]);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'failed',
        nextAttemptAt: null,
        leaseUntil: null,
        lastError: LEASE_EXPIRED,
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')).toMatchObject({ failed: 1, pending: 0 });
    });

    it("makes the forward failed when the budget's age is spent, whatever attempts are left", async () => {
      const delivered = await deliver(store());
      const budget = { attempts: 100, maxAgeMs: LEASE_MS + 1 };
      claimedOne(await claim(store(), T0, { budget }));
      // Expires at T0 + LEASE_MS: the age is LEASE_MS, one ms short of the budget.
      expect(claimedOne(await claim(store(), T0 + LEASE_MS, { budget })).attemptCount).toBe(2);
      expect(await claim(store(), T0 + 2 * LEASE_MS, { budget })).toEqual([]);
      expect((await forward(store(), forwardOf(delivered))).status).toBe('failed');
    });

    it('does not let the late outcome of an expired attempt overwrite the new claim', async () => {
      const delivered = await deliver(store());
      const first = claimedOne(await claim(store(), T0));
      const second = claimedOne(await claim(store(), T0 + LEASE_MS));
      expect(await store().outbox.settle([outcome(first, T0, { state: 'succeeded' }, { durationMs: LEASE_MS + 5 })])).toBe(0);
      expect(await forward(store(), forwardOf(delivered))).toEqual(second);
      const [withAttempts] = await store().outbox.forwardsOf(delivered.id);
      expect(withAttempts?.attempts.map((a) => [a.n, a.status, a.error])).toEqual([[1, null, LEASE_EXPIRED]]);
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')?.lastSuccessAt ?? null).toBeNull();
      expect(await store().outbox.settle([outcome(second, T0 + LEASE_MS, { state: 'succeeded' })])).toBe(1);
      expect((await forward(store(), second.id)).status).toBe('succeeded');
    });
  });
}
