import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { claim, claimedOne, deliverAll, forward, forwardOf, ids, LEASE_MS, outcome, T0 } from './outbox-contract-support.js';

/**
 * CONTRACT 6 "After a crash" (2026-11-27): a push dispatcher's claim names
 * its instance (`owner`); the instance renews all its leases in one call
 * while it lives, so that a short lease is enough; a pull consumer's lease
 * (no owner) is never renewed.
 */
export function describeRenewalContract(store: () => InboxDatabase): void {
  describe('lease renewal', () => {
    it("extends the owner's delivering forwards, and no one else's: they stay its own past their first lease", async () => {
      const [mine, theirs, pulled] = await deliverAll(store(), [{}, {}, {}]);
      const taken = claimedOne(await claim(store(), T0, { max: 1, owner: 'instance-a' }));
      expect(taken.id).toBe(forwardOf(mine));
      claimedOne(await claim(store(), T0, { max: 1, owner: 'instance-b' }));
      claimedOne(await claim(store(), T0, { max: 1 }));
      const until = T0 + 2 * LEASE_MS;
      expect(await store().outbox.renewLeases('instance-a', until)).toEqual([forwardOf(mine)]);
      expect(await forward(store(), forwardOf(mine))).toMatchObject({ status: 'delivering', leaseUntil: until, attemptCount: 1 });
      // At the first lease's end, only the renewed one is still held.
      const retaken = await claim(store(), T0 + LEASE_MS, { max: 10, owner: 'instance-c' });
      expect(ids(retaken).sort()).toEqual([forwardOf(theirs), forwardOf(pulled)].sort());
      expect(await forward(store(), forwardOf(mine))).toMatchObject({ status: 'delivering', leaseUntil: until });
      // And it is claimable once the renewed lease runs out, unless renewed again.
      expect(ids(await claim(store(), until - 1, { owner: 'instance-c' }))).toEqual([]);
      expect(ids(await claim(store(), until, { owner: 'instance-c' }))).toContain(forwardOf(mine));
    });

    it('renews nothing once the forward is settled, released or taken over by another instance', async () => {
      const [settled, released, lost] = await deliverAll(store(), [{}, {}, {}]);
      const claimed = await claim(store(), T0, { owner: 'instance-a' });
      expect(claimed).toHaveLength(3);
      await store().outbox.settle([outcome(claimedOne(claimed, forwardOf(settled)), T0, { state: 'succeeded' })]);
      await store().outbox.release([{ id: forwardOf(released), n: 1 }], T0 + 10);
      // Its lease ran out; another instance claims it (and the released one).
      const other = await claim(store(), T0 + LEASE_MS, { owner: 'instance-b' });
      expect(ids(other).sort()).toEqual([forwardOf(released), forwardOf(lost)].sort());
      expect(await store().outbox.renewLeases('instance-a', T0 + 3 * LEASE_MS)).toEqual([]);
      expect(await forward(store(), forwardOf(lost))).toMatchObject({ attemptCount: 2, leaseUntil: T0 + 2 * LEASE_MS });
      expect((await store().outbox.renewLeases('instance-b', T0 + 3 * LEASE_MS)).sort()).toEqual(
        [forwardOf(released), forwardOf(lost)].sort(),
      );
    });
  });
}
