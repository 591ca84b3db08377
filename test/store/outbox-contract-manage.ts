import { describe, expect, it } from 'vitest';
import type { InboxStore } from '../../src/store/inbox-store.js';
import { LEASE_EXPIRED } from '../../src/store/forward-row.js';
import {
  BUDGET,
  claim,
  claimedOne,
  deliver,
  deliverAll,
  forward,
  forwardOf,
  ids,
  outcome,
  T0,
} from './outbox-contract-support.js';

/** Gives up every forward of the destination that is due at `at`: claims them and records that they failed. */
async function failAllDue(store: InboxStore, at: number, destination = 'app'): Promise<string[]> {
  const taken = await claim(store, at, { destination, max: 1000 });
  await store.outbox.settle(taken.map((c) => outcome(c.forward, at, { state: 'failed' })));
  return ids(taken);
}

/** What people do with forwards: retry the failed ones, cancel, send again. */
export function describeManageContract(store: () => InboxStore): void {
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

/** Pull consumers: ack and nack, as the outbox implements them (CONTRACT 6, "Pull destinations"). */
export function describePullContract(store: () => InboxStore): void {
  describe('ack and nack', () => {
    it('ack makes a claimed forward succeeded and records its attempt without an HTTP status', async () => {
      const delivered = await deliver(store());
      claimedOne(await claim(store(), T0 + 10));
      expect(await store().outbox.ack(forwardOf(delivered), T0 + 70)).toBe(true);
      const [acked] = await store().outbox.forwardsOf(delivered.id);
      expect(acked).toMatchObject({
        status: 'succeeded',
        nextAttemptAt: null,
        leaseUntil: null,
        lastStatus: null,
        lastError: null,
        updatedAt: T0 + 70,
        attempts: [{ n: 1, startedAt: T0 + 10, durationMs: 60, status: null, error: null }],
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')?.lastSuccessAt).toBe(T0 + 70);
    });

    it('ack of a forward that is not leased (its lease ran out, or it failed) still makes it succeeded, without an attempt', async () => {
      const [expired, gone] = await deliverAll(store(), [{}, {}]);
      const claimed = await claim(store(), T0);
      await store().outbox.settle([outcome(claimedOne(claimed, forwardOf(gone)), T0, { state: 'failed' })]);
      await claim(store(), T0 + 100_000, { max: 0 });
      expect((await forward(store(), forwardOf(expired))).status).toBe('pending');
      for (const d of [expired, gone]) {
        expect(await store().outbox.ack(forwardOf(d), T0 + 200_000)).toBe(true);
        expect(await forward(store(), forwardOf(d))).toMatchObject({
          status: 'succeeded',
          nextAttemptAt: null,
          updatedAt: T0 + 200_000,
        });
        expect((await store().outbox.forwardsOf(d?.id ?? ''))[0]?.attempts).toHaveLength(1);
      }
    });

    it('ack after the lease ran out and another consumer claimed it takes the current attempt as succeeded', async () => {
      const delivered = await deliver(store());
      claimedOne(await claim(store(), T0));
      const second = claimedOne(await claim(store(), T0 + 100_000));
      expect(await store().outbox.ack(forwardOf(delivered), T0 + 100_010)).toBe(true);
      const [acked] = await store().outbox.forwardsOf(delivered.id);
      expect(acked?.status).toBe('succeeded');
      expect(acked?.attempts.map((a) => [a.n, a.startedAt, a.error])).toEqual([
        [1, T0, LEASE_EXPIRED],
        [2, second.updatedAt, null],
      ]);
      // The second consumer's ack then changes nothing.
      expect(await store().outbox.ack(forwardOf(delivered), T0 + 100_020)).toBe(true);
      expect((await forward(store(), forwardOf(delivered))).updatedAt).toBe(T0 + 100_010);
    });

    it('ack leaves a succeeded or cancelled forward alone, and answers false for an unknown one', async () => {
      const delivered = await deliver(store());
      await store().outbox.cancel(forwardOf(delivered), T0 + 1);
      expect(await store().outbox.ack(forwardOf(delivered), T0 + 2)).toBe(true);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({ status: 'cancelled', updatedAt: T0 + 1 });
      expect(await store().outbox.ack('fwd_unknown', T0)).toBe(false);
    });

    it('nack records a failed attempt (nack) and makes the forward pending at the time given', async () => {
      const delivered = await deliver(store());
      claimedOne(await claim(store(), T0));
      expect(await store().outbox.nack(forwardOf(delivered), T0 + 40, T0 + 9000, BUDGET)).toBe(true);
      const [nacked] = await store().outbox.forwardsOf(delivered.id);
      expect(nacked).toMatchObject({
        status: 'pending',
        nextAttemptAt: T0 + 9000,
        leaseUntil: null,
        lastError: 'nack',
        attempts: [{ n: 1, startedAt: T0, durationMs: 40, status: null, error: 'nack' }],
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')).toMatchObject({
        lastFailureAt: T0 + 40,
        lastError: 'nack',
      });
      expect(await claim(store(), T0 + 8999)).toEqual([]);
      expect(claimedOne(await claim(store(), T0 + 9000)).attemptCount).toBe(2);
    });

    it('nack makes the forward failed when its budget is spent', async () => {
      const delivered = await deliver(store());
      claimedOne(await claim(store(), T0));
      expect(await store().outbox.nack(forwardOf(delivered), T0 + 1, T0 + 9000, { attempts: 1, maxAgeMs: 1000 })).toBe(true);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({ status: 'failed', nextAttemptAt: null });
    });

    it('nack changes nothing of a forward that is not leased, and answers false for an unknown one', async () => {
      const [pending, done] = await deliverAll(store(), [{ at: T0 + 5 }, {}]);
      await store().outbox.ack(forwardOf(done), T0 + 1);
      const before = await Promise.all([forward(store(), forwardOf(pending)), forward(store(), forwardOf(done))]);
      expect(await store().outbox.nack(forwardOf(pending), T0 + 2, T0 + 9000, BUDGET)).toBe(true);
      expect(await store().outbox.nack(forwardOf(done), T0 + 2, T0 + 9000, BUDGET)).toBe(true);
      expect(await Promise.all([forward(store(), forwardOf(pending)), forward(store(), forwardOf(done))])).toEqual(before);
      expect(await store().outbox.nack('fwd_unknown', T0, T0, BUDGET)).toBe(false);
    });
  });
}
