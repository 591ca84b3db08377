import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import {
  claim,
  claimedOne,
  deliver,
  deliverAll,
  forward,
  forwardOf,
  ids,
  LEASE_MS,
  outcome,
  T0,
} from './outbox-contract-support.js';

/** Claims: what is due, in which order, how many, and what a claim takes. */
export function describeClaimContract(store: () => InboxDatabase): void {
  describe('claim', () => {
    it('leases due forwards oldest due first, then by position, at most max', async () => {
      const [a, b, c, d] = await deliverAll(store(), [{ at: T0 + 30 }, { at: T0 + 10 }, { at: T0 + 20 }, { at: T0 + 10 }]);
      expect(ids(await claim(store(), T0 + 100, { max: 1 }))).toEqual([forwardOf(b)]);
      // Several at once come in position order; which ones is what counts.
      expect(ids(await claim(store(), T0 + 100, { max: 2 }))).toEqual([forwardOf(c), forwardOf(d)]);
      expect(ids(await claim(store(), T0 + 100, { max: 3 }))).toEqual([forwardOf(a)]);
      expect(await claim(store(), T0 + 100)).toEqual([]);
    });

    it('orders by the due time a settle set, not by creation', async () => {
      const [early, late] = await deliverAll(store(), [{ at: T0 }, { at: T0 + 1 }]);
      const taken = claimedOne(await claim(store(), T0 + 1, { max: 1 }));
      expect(taken.id).toBe(forwardOf(early));
      await store().outbox.settle([outcome(taken, T0 + 1, { state: 'pending', at: T0 + 2 })]);
      const [again] = await deliverAll(store(), [{ at: T0 + 3 }]);
      for (const next of [late, early, again]) expect(ids(await claim(store(), T0 + 10, { max: 1 }))).toEqual([forwardOf(next)]);
    });

    it('claims nothing that is not yet due, and claims it from its due time on', async () => {
      const delivered = await deliver(store(), { at: T0 + 1000 });
      expect(await claim(store(), T0 + 999)).toEqual([]);
      expect(ids(await claim(store(), T0 + 1000))).toEqual(delivered.forwards);
    });

    it('claims only the named destination', async () => {
      const delivered = await deliver(store(), { to: ['app', 'worker'] });
      expect(ids(await claim(store(), T0, { destination: 'worker' }))).toEqual([delivered.forwards[1]]);
      expect(ids(await claim(store(), T0, { destination: 'elsewhere' }))).toEqual([]);
      expect(ids(await claim(store(), T0))).toEqual([delivered.forwards[0]]);
    });

    it('release hands a claimed forward back unattempted: pending now, its attempt number and budget as before, no attempt row', async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0 + 10));
      expect(taken.attemptCount).toBe(1);
      await store().outbox.release([{ id: taken.id, n: taken.attemptCount }], T0 + 20);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'pending',
        attemptCount: 0,
        budgetUsed: 0,
        nextAttemptAt: T0 + 20,
        leaseUntil: null,
      });
      expect((await store().outbox.forwardsOf(delivered.id))[0]?.attempts).toEqual([]);
      // A release for an attempt that is no longer current changes nothing.
      const again = claimedOne(await claim(store(), T0 + 30));
      expect(again.attemptCount).toBe(1);
      await store().outbox.release([{ id: again.id, n: 7 }], T0 + 40);
      expect((await forward(store(), again.id)).status).toBe('delivering');
    });

    it('claims nothing with max 0', async () => {
      await deliver(store());
      expect(await claim(store(), T0, { max: 0 })).toEqual([]);
      expect((await store().outbox.list({ limit: 10 }))[0]?.status).toBe('pending');
    });

    it('takes the attempt: delivering, attemptCount and budgetUsed one more, leased until now + leaseMs, with its delivery', async () => {
      const delivered = await deliver(store(), { source: 'stripe' });
      const [claimed] = await claim(store(), T0 + 50, { leaseMs: 7000 });
      expect(claimed?.forward).toMatchObject({
        id: forwardOf(delivered),
        status: 'delivering',
        attemptCount: 1,
        budgetUsed: 1,
        budgetStartedAt: T0,
        leaseUntil: T0 + 7050,
        nextAttemptAt: T0 + 7050,
        updatedAt: T0 + 50,
        source: 'stripe',
        deliverySeq: delivered.seq,
      });
      const stored = await store().get(delivered.id);
      expect(claimed?.delivery.id).toBe(delivered.id);
      expect(claimed?.delivery.raw.equals(stored?.raw ?? Buffer.alloc(0))).toBe(true);
      expect(claimed?.delivery).toMatchObject({ seq: delivered.seq, source: 'stripe', headers: stored?.headers });
      expect(await forward(store(), forwardOf(delivered))).toEqual(claimed?.forward);
    });

    it('counts attempts on: each claim is number previous + 1', async () => {
      const delivered = await deliver(store());
      for (let n = 1; n <= 3; n++) {
        const taken = claimedOne(await claim(store(), T0 + n * 100));
        expect([taken.attemptCount, taken.budgetUsed]).toEqual([n, n]);
        await store().outbox.settle([outcome(taken, T0 + n * 100, { state: 'pending', at: T0 + n * 100 + 50 })]);
      }
      expect((await forward(store(), forwardOf(delivered))).attemptCount).toBe(3);
    });

    it('claims nothing of a paused destination, and claims again once it is resumed', async () => {
      const delivered = await deliver(store(), { to: ['app', 'worker'] });
      await store().outbox.setPaused('app', true);
      expect(await claim(store(), T0)).toEqual([]);
      expect(ids(await claim(store(), T0, { destination: 'worker' }))).toEqual([delivered.forwards[1]]);
      expect((await forward(store(), forwardOf(delivered))).status).toBe('pending');
      await store().outbox.setPaused('app', false);
      expect(ids(await claim(store(), T0))).toEqual([delivered.forwards[0]]);
    });
  });
}

/** Settles: what an outcome makes of a forward, and that only the current attempt's counts. */
export function describeSettleContract(store: () => InboxDatabase): void {
  describe('settle', () => {
    it("records a success: succeeded, nothing due, the attempt and the destination's last success", async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0 + 10));
      expect(
        await store().outbox.settle([outcome(taken, T0 + 10, { state: 'succeeded' }, { status: 204, durationMs: 40 })]),
      ).toBe(1);
      const [settled] = await store().outbox.forwardsOf(delivered.id);
      expect(settled).toMatchObject({
        status: 'succeeded',
        nextAttemptAt: null,
        leaseUntil: null,
        lastStatus: 204,
        lastError: null,
        updatedAt: T0 + 50,
        attempts: [{ n: 1, startedAt: T0 + 10, durationMs: 40, status: 204, error: null }],
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')).toMatchObject({
        lastSuccessAt: T0 + 50,
        pending: 0,
      });
      expect(await claim(store(), T0 + LEASE_MS * 10)).toEqual([]);
    });

    it('records a failed attempt that is tried again: pending at the time given', async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      await store().outbox.settle([outcome(taken, T0, { state: 'pending', at: T0 + 5000 }, { status: 500, error: 'HTTP 500' })]);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'pending',
        nextAttemptAt: T0 + 5000,
        leaseUntil: null,
        lastStatus: 500,
        lastError: 'HTTP 500',
        attemptCount: 1,
      });
      expect(await claim(store(), T0 + 4999)).toEqual([]);
      expect(claimedOne(await claim(store(), T0 + 5000)).attemptCount).toBe(2);
    });

    it("records a forward that gave up: failed, and the destination's last failure", async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      await store().outbox.settle([
        outcome(taken, T0, { state: 'failed' }, { status: null, error: 'timeout after 10000 ms', durationMs: 10_000 }),
      ]);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'failed',
        nextAttemptAt: null,
        lastStatus: null,
        lastError: 'timeout after 10000 ms',
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')).toMatchObject({
        failed: 1,
        pending: 0,
        lastFailureAt: T0 + 10_000,
        lastError: 'timeout after 10000 ms',
        lastSuccessAt: null,
      });
      expect(await claim(store(), T0 + LEASE_MS * 10)).toEqual([]);
    });

    it('keeps every attempt in order, with its status and error', async () => {
      const delivered = await deliver(store());
      // The destination's answer (CONTRACT 6, 2026-11-27) is kept with its attempt, as it was given.
      const answer = {
        headers: [
          ['Content-Type', 'application/json'],
          ['set-cookie', 'a=1'],
          ['set-cookie', 'b=2'],
        ] as Array<[string, string]>,
        body: '{"error":"db \uFFFD down"}',
        bodyTruncated: true,
      };
      const results = [
        { status: 503, error: 'HTTP 503', response: answer, next: { state: 'pending' as const, at: T0 + 1000 } },
        {
          status: null,
          error: 'connect ECONNREFUSED 127.0.0.1:9',
          response: null,
          next: { state: 'pending' as const, at: T0 + 2000 },
        },
        {
          status: 200,
          error: null,
          response: { headers: [], body: '', bodyTruncated: false },
          next: { state: 'succeeded' as const },
        },
      ];
      for (const [i, result] of results.entries()) {
        const taken = claimedOne(await claim(store(), T0 + i * 1000));
        await store().outbox.settle([
          {
            ...outcome(taken, T0 + i * 1000, result.next, { status: result.status, error: result.error, durationMs: i }),
            response: result.response,
          },
        ]);
      }
      const [settled] = await store().outbox.forwardsOf(delivered.id);
      expect(settled?.attempts).toEqual(
        results.map((r, i) => ({
          n: i + 1,
          startedAt: T0 + i * 1000,
          durationMs: i,
          status: r.status,
          error: r.error,
          response: r.response,
          transform: null,
        })),
      );
    });

    it('changes nothing for an attempt that is no longer current, and counts only the current ones', async () => {
      const [moved, other] = await deliverAll(store(), [{}, {}]);
      const claimed = await claim(store(), T0);
      const first = claimedOne(claimed, forwardOf(moved));
      const untouched = claimedOne(claimed, forwardOf(other));
      expect(await store().outbox.settle([outcome(first, T0, { state: 'pending', at: T0 + 10 })])).toBe(1);
      const second = claimedOne(await claim(store(), T0 + 10));
      expect([second.id, second.attemptCount]).toEqual([first.id, 2]);
      // Attempt 1 of `moved` again (it was settled; attempt 2 is current), and two current ones.
      const answered = await store().outbox.settle([
        outcome(first, T0 + 20, { state: 'succeeded' }),
        outcome(second, T0 + 20, { state: 'pending', at: T0 + 999 }),
        outcome(untouched, T0 + 20, { state: 'failed' }),
      ]);
      expect(answered).toBe(2);
      expect(await forward(store(), first.id)).toMatchObject({
        status: 'pending',
        attemptCount: 2,
        nextAttemptAt: T0 + 999,
        lastStatus: 503,
      });
      expect((await forward(store(), untouched.id)).status).toBe('failed');
      const [withAttempts] = await store().outbox.forwardsOf(moved?.id ?? '');
      expect(withAttempts?.attempts.map((a) => [a.n, a.startedAt, a.status])).toEqual([
        [1, T0, 503],
        [2, T0 + 20, 503],
      ]);
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')?.lastSuccessAt ?? null).toBeNull();
    });

    it('changes nothing for the outcome of a forward cancelled while it was delivering', async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      expect(await store().outbox.cancel(taken.id, T0 + 5)).toBe(true);
      expect(await store().outbox.settle([outcome(taken, T0, { state: 'succeeded' })])).toBe(0);
      expect(await forward(store(), forwardOf(delivered))).toMatchObject({
        status: 'cancelled',
        nextAttemptAt: null,
        lastStatus: null,
        updatedAt: T0 + 5,
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')?.lastSuccessAt ?? null).toBeNull();
    });

    it('answers 0 for no outcomes, for a forward that does not exist and for an attempt not taken, recording none of them', async () => {
      expect(await store().outbox.settle([])).toBe(0);
      expect(
        await store().outbox.settle([
          outcome({ id: 'fwd_none', destination: 'app', attemptCount: 1 }, T0, { state: 'succeeded' }),
        ]),
      ).toBe(0);
      const delivered = await deliver(store());
      const first = claimedOne(await claim(store(), T0));
      const ahead = outcome(first, T0, { state: 'succeeded' }, { n: 2, status: 299 });
      expect(await store().outbox.settle([ahead])).toBe(0);
      await store().outbox.settle([outcome(first, T0, { state: 'pending', at: T0 + 1 })]);
      const second = claimedOne(await claim(store(), T0 + 1));
      await store().outbox.settle([outcome(second, T0 + 1, { state: 'succeeded' })]);
      const [settled] = await store().outbox.forwardsOf(delivered.id);
      expect(settled?.attempts.map((a) => [a.n, a.status])).toEqual([
        [1, 503],
        [2, 200],
      ]);
    });
  });
}
