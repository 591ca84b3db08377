import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { LEASE_EXPIRED } from '../forward-row.js';
import { claim, deliveryTo, forward, ids, LEASE_MS, outcome, T0 } from './outbox-contract-support.js';

/**
 * A forward leased in its delivery's commit (`NewForward.lease`; see
 * docs/forwarding.md "How a forward goes from the commit to the wire"):
 * stored as a claim by its owner would leave it, answered in the append's
 * outcome, and from then on a claimed forward like any other.
 */
export function describeCommitLeaseContract(store: () => InboxDatabase): void {
  describe('forwards leased at the commit', () => {
    const leased = (token: string, owner = 'instance-a') => ({ owner, token, startedAt: T0 + 1, until: T0 + 1 + LEASE_MS });

    it('are stored delivering, their first attempt taken and leased to the owner; the outcome names them with their position', async () => {
      const d = deliveryTo({ to: ['app', 'worker'], at: T0 });
      const [app, worker] = d.forwards;
      if (app === undefined || worker === undefined) throw new Error('two forwards expected');
      const batch = [{ ...d, forwards: [{ ...app, lease: leased('token-1') }, worker] }];
      const [appended] = await store().append(batch);
      const stored = await forward(store(), app.id);
      expect(appended?.leased).toEqual([{ id: app.id, position: stored.position }]);
      expect(stored).toMatchObject({
        status: 'delivering',
        attemptCount: 1,
        budgetUsed: 1,
        budgetStartedAt: T0,
        lease: 'token-1',
        leaseUntil: T0 + 1 + LEASE_MS,
        nextAttemptAt: T0 + 1 + LEASE_MS,
      });
      expect(await forward(store(), worker.id)).toMatchObject({ status: 'pending', attemptCount: 0, lease: null });
      // Not claimable while its lease lasts; the one without a lease is.
      expect(ids(await claim(store(), T0 + 2, { max: 10, owner: 'instance-b' }))).toEqual([]);
      const other = await claim(store(), T0 + 2, { destination: 'worker', max: 10, owner: 'instance-b' });
      expect(ids(other)).toEqual([worker.id]);
    });

    it("are renewed with the owner's leases, settled by attempt 1, and taken over when the lease runs out", async () => {
      const [a, b] = [deliveryTo({ at: T0 }), deliveryTo({ at: T0 })];
      const fa = a.forwards[0];
      const fb = b.forwards[0];
      if (fa === undefined || fb === undefined) throw new Error('a forward expected');
      await store().append([
        { ...a, forwards: [{ ...fa, lease: leased('token-a') }] },
        { ...b, forwards: [{ ...fb, lease: leased('token-b') }] },
      ]);
      const until = T0 + 3 * LEASE_MS;
      expect((await store().outbox.renewLeases('instance-a', until)).sort()).toEqual([fa.id, fb.id].sort());
      const settledA = await forward(store(), fa.id);
      const counted = await store().outbox.settle([outcome(settledA, T0 + 5, { state: 'succeeded' })]);
      expect(counted).toBe(1);
      expect(await forward(store(), fa.id)).toMatchObject({ status: 'succeeded', attemptCount: 1 });
      // The owner died: its lease runs out unrenewed, and another instance takes it over.
      expect(ids(await claim(store(), until - 1, { owner: 'instance-b' }))).toEqual([]);
      expect(ids(await claim(store(), until, { owner: 'instance-b' }))).toEqual([fb.id]);
      const taken = await store().outbox.forwardsOf(b.id);
      expect(taken[0]).toMatchObject({ status: 'delivering', attemptCount: 2 });
      expect(taken[0]?.attempts.map((x) => [x.n, x.error])).toEqual([[1, LEASE_EXPIRED]]);
    });

    it('of a duplicate are not stored: only the first delivery of a dedup key has its forward leased', async () => {
      const first = deliveryTo({ at: T0, dedupKey: 'evt_1' });
      const again = deliveryTo({ at: T0, dedupKey: 'evt_1' });
      const [f1] = first.forwards;
      const [f2] = again.forwards;
      if (f1 === undefined || f2 === undefined) throw new Error('a forward expected');
      const [a, b] = await store().append([
        { ...first, forwards: [{ ...f1, lease: leased('token-1') }] },
        { ...again, forwards: [{ ...f2, lease: leased('token-2') }] },
      ]);
      expect(a).toMatchObject({ duplicate: false, leased: [{ id: f1.id }] });
      expect(b?.duplicate).toBe(true);
      expect(b?.leased).toBeUndefined();
      expect(await store().outbox.get(f2.id)).toBeUndefined();
    });

    it('of a paused destination are stored pending, unleased, and not named in the outcome', async () => {
      await store().outbox.setPaused('app', true);
      const d = deliveryTo({ at: T0 });
      const f = d.forwards[0];
      if (f === undefined) throw new Error('a forward expected');
      const [appended] = await store().append([{ ...d, forwards: [{ ...f, lease: leased('token-p') }] }]);
      expect(appended?.leased).toBeUndefined();
      expect(await forward(store(), f.id)).toMatchObject({ status: 'pending', attemptCount: 0, lease: null, leaseUntil: null });
    });
  });
}
