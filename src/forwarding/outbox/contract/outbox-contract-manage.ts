import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { claim, claimedOne, deliver, deliverAll, forward, forwardOf, ids, outcome, T0 } from './outbox-contract-support.js';

/** Gives up every forward of the destination that is due at `at`: claims them and records that they failed. */
async function failAllDue(store: InboxDatabase, at: number, destination = 'app'): Promise<string[]> {
  const taken = await claim(store, at, { destination, max: 1000 });
  await store.outbox.settle(taken.map((c) => outcome(c.forward, at, { state: 'failed' })));
  return ids(taken);
}

/** What people do with forwards: retry the failed ones, cancel, send again. */
export function describeManageContract(store: () => InboxDatabase): void {
  describe('retry', () => {
    it('makes the failed forwards named pending with a fresh budget, and counts only those', async () => {
      const [gone, waiting, done] = await deliverAll(store(), [{}, {}, {}]);
      const claimed = await claim(store(), T0);
      await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(gone)), T0, { state: 'failed' }),
        outcome(claimedOne(claimed, forwardOf(done)), T0, { state: 'succeeded' }),
      ]);
      const before = await forward(store(), forwardOf(gone));
      const answered = await store().outbox.retry(
        { ids: [forwardOf(gone), forwardOf(waiting), forwardOf(done), 'fwd_unknown'] },
        T0 + 100,
      );
      expect(answered).toBe(1);
      expect(await forward(store(), forwardOf(gone))).toMatchObject({
        status: 'pending',
        attemptCount: before.attemptCount,
        budgetUsed: 0,
        budgetStartedAt: T0 + 100,
        nextAttemptAt: T0 + 100,
        updatedAt: T0 + 100,
      });
      expect((await forward(store(), forwardOf(waiting))).status).toBe('delivering');
      expect((await forward(store(), forwardOf(done))).status).toBe('succeeded');
      const again = claimedOne(await claim(store(), T0 + 100), forwardOf(gone));
      expect([again.attemptCount, again.budgetUsed]).toEqual([before.attemptCount + 1, 1]);
      expect(await store().outbox.retry({ ids: [] }, T0 + 200)).toBe(0);
    });

    it('gives a retried forward its whole budget again, attempts and age', async () => {
      const delivered = await deliver(store());
      const budget = { attempts: 1, maxAgeMs: 1000 };
      const taken = claimedOne(await claim(store(), T0, { budget }));
      await store().outbox.settle([outcome(taken, T0, { state: 'failed' })]);
      await store().outbox.retry({ ids: [forwardOf(delivered)] }, T0 + 50_000);
      // A lease that runs out within the fresh budget makes it pending, not failed.
      claimedOne(await claim(store(), T0 + 50_000, { budget: { attempts: 2, maxAgeMs: 1000 }, leaseMs: 500 }));
      claimedOne(await claim(store(), T0 + 50_500, { budget: { attempts: 2, maxAgeMs: 1000 }, leaseMs: 500 }));
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'delivering',
        attemptCount: 3,
        budgetUsed: 2,
      });
    });

    it('selects failed forwards by destination, source and creation time (since inclusive, until exclusive)', async () => {
      const delivered = await deliverAll(store(), [
        { source: 'a', at: T0 + 10, to: ['app', 'worker'] },
        { source: 'b', at: T0 + 20 },
        { source: 'a', at: T0 + 30 },
        { source: 'a', at: T0 + 40 },
      ]);
      const all = delivered.flatMap((d) => d.forwards);
      const failAll = async (at: number): Promise<number> =>
        (await failAllDue(store(), at)).length + (await failAllDue(store(), at, 'worker')).length;
      expect(await failAll(T0 + 100)).toBe(5);
      const status = async (): Promise<string[]> => Promise.all(all.map(async (id) => (await forward(store(), id)).status));
      const back = async (): Promise<void> => {
        await failAll(T0 + 200);
        expect(await status()).toEqual(all.map(() => 'failed'));
      };
      expect(await store().outbox.retry({ destination: 'worker' }, T0 + 150)).toBe(1);
      expect(await status()).toEqual(['failed', 'pending', 'failed', 'failed', 'failed']);
      await back();
      expect(await store().outbox.retry({ source: 'a', destination: 'app' }, T0 + 150)).toBe(3);
      expect(await status()).toEqual(['pending', 'failed', 'failed', 'pending', 'pending']);
      await back();
      expect(await store().outbox.retry({ since: T0 + 20, until: T0 + 40 }, T0 + 150)).toBe(2);
      expect(await status()).toEqual(['failed', 'failed', 'pending', 'pending', 'failed']);
      await back();
      expect(await store().outbox.retry({ source: 'nobody' }, T0 + 150)).toBe(0);
      expect(await store().outbox.retry({}, T0 + 150)).toBe(5);
      expect(await store().outbox.retry({}, T0 + 150)).toBe(0);
    });
  });

  describe('cancel', () => {
    it('cancels a pending, a delivering and a failed forward: nothing due any more', async () => {
      const [pending, delivering, gone] = await deliverAll(store(), [{ at: T0 + 500 }, {}, {}]);
      const claimed = await claim(store(), T0);
      expect(ids(claimed)).toEqual([forwardOf(delivering), forwardOf(gone)]);
      await store().outbox.settle([outcome(claimedOne(claimed, forwardOf(gone)), T0, { state: 'failed' })]);
      for (const d of [pending, delivering, gone]) {
        expect(await store().outbox.cancel(forwardOf(d), T0 + 10)).toBe(true);
        expect(await forward(store(), forwardOf(d))).toMatchObject({
          status: 'cancelled',
          nextAttemptAt: null,
          leaseUntil: null,
          updatedAt: T0 + 10,
        });
      }
      expect(await claim(store(), T0 + 10_000_000)).toEqual([]);
      expect(await store().outbox.retry({}, T0 + 20)).toBe(0);
    });

    it('leaves a succeeded or cancelled forward as it is, and answers false for an unknown one', async () => {
      const [done, cancelled] = await deliverAll(store(), [{}, {}]);
      const taken = claimedOne(await claim(store(), T0), forwardOf(done));
      await store().outbox.settle([outcome(taken, T0, { state: 'succeeded' })]);
      await store().outbox.cancel(forwardOf(cancelled), T0 + 1);
      const before = await Promise.all([forward(store(), forwardOf(done)), forward(store(), forwardOf(cancelled))]);
      expect(await store().outbox.cancel(forwardOf(done), T0 + 50)).toBe(true);
      expect(await store().outbox.cancel(forwardOf(cancelled), T0 + 50)).toBe(true);
      expect(await Promise.all([forward(store(), forwardOf(done)), forward(store(), forwardOf(cancelled))])).toEqual(before);
      expect(before.map((f) => f.status)).toEqual(['succeeded', 'cancelled']);
      expect(await store().outbox.cancel('fwd_unknown', T0)).toBe(false);
    });
  });

  describe('create (send again)', () => {
    it('creates a new pending forward of a stored delivery, whatever happened to the others', async () => {
      const delivered = await deliver(store(), { source: 'stripe', at: T0 });
      const taken = claimedOne(await claim(store(), T0));
      await store().outbox.settle([outcome(taken, T0, { state: 'succeeded' })]);
      const created = await store().outbox.create(delivered.id, { id: 'fwd_again', destination: 'app' }, T0 + 900);
      expect(created).toMatchObject({
        id: 'fwd_again',
        deliveryId: delivered.id,
        deliverySeq: delivered.seq,
        source: 'stripe',
        destination: 'app',
        status: 'pending',
        attemptCount: 0,
        budgetUsed: 0,
        budgetStartedAt: T0 + 900,
        nextAttemptAt: T0 + 900,
        createdAt: T0 + 900,
        leaseUntil: null,
      });
      expect(created?.position).toBeGreaterThan(taken.position);
      expect(await store().outbox.get('fwd_again')).toEqual(created);
      expect((await store().outbox.forwardsOf(delivered.id)).map((f) => [f.id, f.status])).toEqual([
        [taken.id, 'succeeded'],
        ['fwd_again', 'pending'],
      ]);
      expect((await store().get(delivered.id))?.forwards).toEqual([
        { destination: 'app', status: 'succeeded' },
        { destination: 'app', status: 'pending' },
      ]);
      expect(ids(await claim(store(), T0 + 900))).toEqual(['fwd_again']);
    });

    it('creates one to another destination too', async () => {
      const delivered = await deliver(store(), { to: [] });
      expect((await store().outbox.create(delivered.id, { id: 'fwd_new', destination: 'worker' }, T0))?.destination).toBe(
        'worker',
      );
      expect(ids(await claim(store(), T0, { destination: 'worker' }))).toEqual(['fwd_new']);
    });

    it('answers undefined for a delivery that does not exist, and creates nothing', async () => {
      expect(await store().outbox.create('dlv_unknown', { id: 'fwd_orphan', destination: 'app' }, T0)).toBeUndefined();
      expect(await store().outbox.get('fwd_orphan')).toBeUndefined();
      expect(await store().outbox.destinations()).toEqual([]);
    });
  });
}
