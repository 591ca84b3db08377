import { describe, expect, it } from 'vitest';
import { LEASE_EXPIRED } from '../forward-row.js';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { CLAIM_MAX_BYTES, type Forward } from '../outbox.js';
import { newDelivery } from '../../../../test/helpers/delivery-factory.js';
import {
  BUDGET,
  claim,
  claimedOne,
  deliver,
  deliverAll,
  deliveryTo,
  forward,
  forwardOf,
  ids,
  LEASE_MS,
  outcome,
  T0,
} from './outbox-contract-support.js';

/** The lease a claim wrote on a forward, which must have one. */
function leaseOf(f: Forward): string {
  if (f.lease === null) throw new Error(`forward ${f.id} has no lease`);
  return f.lease;
}

/** Pull consumers: ack and nack, fenced by the claim's lease (CONTRACT 6, "Pull destinations", "Leases are fenced"). */
export function describePullContract(store: () => InboxDatabase): void {
  describe('leases, ack and nack', () => {
    it('writes a new opaque lease on every forward each claim takes, and none on those not delivering', async () => {
      const [one, two] = await deliverAll(store(), [{}, {}]);
      expect((await forward(store(), forwardOf(one))).lease).toBeNull();
      const claimed = await claim(store(), T0);
      const leases = claimed.map((c) => leaseOf(c.forward));
      expect(leases).toHaveLength(2);
      for (const lease of leases) expect(lease).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(new Set(leases).size).toBe(2);
      expect((await forward(store(), forwardOf(two))).lease).toBe(claimedOne(claimed, forwardOf(two)).lease);
      // Claimed again once the lease ran out: a new lease.
      const again = claimedOne(await claim(store(), T0 + LEASE_MS, { max: 1 }));
      expect(leases).not.toContain(again.lease);
      expect(again.lease).not.toBeNull();
    });

    it('clears the lease when the forward is settled, released, expired, cancelled or retried', async () => {
      const [settled, released, expired, cancelled] = await deliverAll(store(), [{}, {}, {}, {}]);
      const claimed = await claim(store(), T0);
      await store().outbox.settle([outcome(claimedOne(claimed, forwardOf(settled)), T0, { state: 'failed' })]);
      const back = claimedOne(claimed, forwardOf(released));
      await store().outbox.release([{ id: back.id, n: back.attemptCount }], T0 + 1);
      await store().outbox.cancel(forwardOf(cancelled), T0 + 2);
      await claim(store(), T0 + LEASE_MS, { max: 0 });
      await store().outbox.retry({ ids: [forwardOf(settled)] }, T0 + LEASE_MS + 1);
      for (const d of [settled, released, expired, cancelled]) {
        expect(await forward(store(), forwardOf(d))).toMatchObject({ lease: null, leaseUntil: null });
      }
      expect((await forward(store(), forwardOf(expired))).status).toBe('pending');
    });

    it('ack with the current lease makes the forward succeeded and records its attempt without an HTTP status', async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0 + 10));
      expect(await store().outbox.ack(taken.id, leaseOf(taken), T0 + 70)).toBe('ok');
      const [acked] = await store().outbox.forwardsOf(delivered.id);
      expect(acked).toMatchObject({
        status: 'succeeded',
        nextAttemptAt: null,
        leaseUntil: null,
        lease: null,
        lastStatus: null,
        lastError: null,
        updatedAt: T0 + 70,
        attempts: [{ n: 1, startedAt: T0 + 10, durationMs: 60, status: null, error: null }],
      });
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')?.lastSuccessAt).toBe(T0 + 70);
      // The same ack again: the lease went with the settlement.
      expect(await store().outbox.ack(taken.id, leaseOf(taken), T0 + 80)).toBe('lease_lost');
      expect((await forward(store(), taken.id)).updatedAt).toBe(T0 + 70);
    });

    it('two consumers on one expired lease: the first one’s ack and nack are lease_lost and change nothing; the second’s ack holds', async () => {
      const delivered = await deliver(store());
      const first = claimedOne(await claim(store(), T0));
      const second = claimedOne(await claim(store(), T0 + LEASE_MS));
      expect(second.lease).not.toBe(first.lease);
      expect(await store().outbox.nack(first.id, leaseOf(first), T0 + LEASE_MS + 5, T0 + LEASE_MS + 5, BUDGET)).toBe(
        'lease_lost',
      );
      expect(await store().outbox.ack(first.id, leaseOf(first), T0 + LEASE_MS + 6)).toBe('lease_lost');
      expect(await forward(store(), first.id)).toEqual(second);
      expect(await claim(store(), T0 + LEASE_MS + 7)).toEqual([]);
      expect(await store().outbox.ack(second.id, leaseOf(second), T0 + LEASE_MS + 10)).toBe('ok');
      const [acked] = await store().outbox.forwardsOf(delivered.id);
      expect(acked?.status).toBe('succeeded');
      expect(acked?.attempts.map((a) => [a.n, a.startedAt, a.error])).toEqual([
        [1, T0, LEASE_EXPIRED],
        [2, T0 + LEASE_MS, null],
      ]);
    });

    it('counts a lease whose time ran out as lost, before any claim has swept it', async () => {
      await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      const before = await forward(store(), taken.id);
      expect(await store().outbox.ack(taken.id, leaseOf(taken), T0 + LEASE_MS)).toBe('lease_lost');
      expect(await store().outbox.nack(taken.id, leaseOf(taken), T0 + LEASE_MS, T0 + LEASE_MS, BUDGET)).toBe('lease_lost');
      expect(await forward(store(), taken.id)).toEqual(before);
      // One ms before it runs out, it holds.
      const other = await deliver(store(), { at: T0 + 1 });
      const next = claimedOne(await claim(store(), T0 + 1));
      expect(next.id).toBe(forwardOf(other));
      expect(await store().outbox.ack(next.id, leaseOf(next), T0 + 1 + LEASE_MS - 1)).toBe('ok');
    });

    it('answers lease_lost, changing nothing, for a wrong lease and for a pending, settled or cancelled forward', async () => {
      const [held, pending, done, cancelled] = await deliverAll(store(), [{}, {}, {}, {}]);
      const claimed = await claim(store(), T0, { max: 10 });
      const doneForward = claimedOne(claimed, forwardOf(done));
      expect(await store().outbox.ack(doneForward.id, leaseOf(doneForward), T0 + 1)).toBe('ok');
      const back = claimedOne(claimed, forwardOf(pending));
      await store().outbox.release([{ id: back.id, n: back.attemptCount }], T0 + 1);
      const cancelledForward = claimedOne(claimed, forwardOf(cancelled));
      await store().outbox.cancel(cancelledForward.id, T0 + 1);
      const heldForward = claimedOne(claimed, forwardOf(held));
      const all = [held, pending, done, cancelled].map(forwardOf);
      const before = await Promise.all(all.map((id) => forward(store(), id)));
      const attempts = async (): Promise<unknown> =>
        Promise.all(
          [held, pending, done, cancelled].map(async (d) => (await store().outbox.forwardsOf(d?.id ?? ''))[0]?.attempts),
        );
      const attemptsBefore = await attempts();
      for (const wrong of ['', 'not-the-lease', leaseOf(doneForward), 'nul\u0000lease', 'x'.repeat(300)]) {
        expect(await store().outbox.ack(heldForward.id, wrong, T0 + 2)).toBe('lease_lost');
        expect(await store().outbox.nack(heldForward.id, wrong, T0 + 2, T0 + 9000, BUDGET)).toBe('lease_lost');
      }
      for (const [f, lease] of [
        [back, leaseOf(back)],
        [doneForward, leaseOf(doneForward)],
        [cancelledForward, leaseOf(cancelledForward)],
      ] as const) {
        expect(await store().outbox.ack(f.id, lease, T0 + 2)).toBe('lease_lost');
        expect(await store().outbox.nack(f.id, lease, T0 + 2, T0 + 9000, BUDGET)).toBe('lease_lost');
      }
      expect(await Promise.all(all.map((id) => forward(store(), id)))).toEqual(before);
      expect(await attempts()).toEqual(attemptsBefore);
    });

    it('answers not_found for a forward that does not exist', async () => {
      expect(await store().outbox.ack('fwd_unknown', 'lease', T0)).toBe('not_found');
      expect(await store().outbox.nack('fwd_unknown', 'lease', T0, T0, BUDGET)).toBe('not_found');
      expect(await store().outbox.ack('fwd_\u0000', 'lease', T0)).toBe('not_found');
    });

    it('nack with the current lease records a failed attempt (nack) and makes the forward pending at the time given', async () => {
      const delivered = await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      expect(await store().outbox.nack(taken.id, leaseOf(taken), T0 + 40, T0 + 9000, BUDGET)).toBe('ok');
      const [nacked] = await store().outbox.forwardsOf(delivered.id);
      expect(nacked).toMatchObject({
        status: 'pending',
        nextAttemptAt: T0 + 9000,
        leaseUntil: null,
        lease: null,
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
      await deliver(store());
      const taken = claimedOne(await claim(store(), T0));
      const budget = { attempts: 1, maxAgeMs: 1000 };
      expect(await store().outbox.nack(taken.id, leaseOf(taken), T0 + 1, T0 + 9000, budget)).toBe('ok');
      expect(await forward(store(), taken.id)).toMatchObject({ status: 'failed', nextAttemptAt: null, lease: null });
    });
  });
}

/** The claim's byte bound (CONTRACT 6, "Leases are fenced"): the bodies handed out, at most `maxBytes`. */
export function describeClaimBoundContract(store: () => InboxDatabase): void {
  describe('the byte bound of a claim', () => {
    const MIB = 1024 * 1024;
    /** Deliveries of `bytes` each (JSON), to `app`, received in order, each from the source given (default one). */
    const deliverSized = async (sizes: readonly number[], sources: readonly string[] = []): Promise<string[]> => {
      const forwardIds: string[] = [];
      for (const [i, bytes] of sizes.entries()) {
        const source = sources[i] ?? 'github';
        const { forwards } = deliveryTo({ at: T0 + i, source });
        const raw = Buffer.alloc(bytes, 'a');
        raw.write('{"a":"');
        raw.write('"}', bytes - 2);
        await store().append([{ ...newDelivery({ receivedAt: T0 + i, source, raw }), forwards }]);
        forwardIds.push(...forwards.map((f) => f.id));
      }
      return forwardIds;
    };

    it('hands out no more than maxBytes of bodies; the rest stay pending with no attempt spent', async () => {
      const forwards = await deliverSized([3 * MIB, 3 * MIB, 3 * MIB, 100]);
      const claimed = await claim(store(), T0 + 10, { max: 10, maxBytes: CLAIM_MAX_BYTES });
      expect(ids(claimed)).toEqual(forwards.slice(0, 2));
      expect(claimed.map((c) => c.delivery.raw.length)).toEqual([3 * MIB, 3 * MIB]);
      for (const id of forwards.slice(2)) {
        expect(await forward(store(), id)).toMatchObject({
          status: 'pending',
          attemptCount: 0,
          budgetUsed: 0,
          lease: null,
          leaseUntil: null,
          nextAttemptAt: expect.any(Number),
        });
      }
      // The next claim takes what is left, oldest first.
      expect(ids(await claim(store(), T0 + 20, { max: 10, maxBytes: CLAIM_MAX_BYTES }))).toEqual(forwards.slice(2));
    });

    it('always hands out one forward, however large its body', async () => {
      const forwards = await deliverSized([3 * MIB, 100]);
      expect(ids(await claim(store(), T0 + 10, { max: 10, maxBytes: MIB }))).toEqual(forwards.slice(0, 1));
      expect(await forward(store(), forwards[1] ?? '')).toMatchObject({ status: 'pending', attemptCount: 0 });
    });

    it('applies to ordered claims too', async () => {
      // Each delivery from its own source: three heads, of which the bound takes two.
      const forwards = await deliverSized([3 * MIB, 3 * MIB, 3 * MIB], ['a', 'b', 'c']);
      const claimed = await claim(store(), T0 + 10, { max: 10, maxBytes: CLAIM_MAX_BYTES, ordered: true });
      expect(ids(claimed)).toEqual(forwards.slice(0, 2));
      expect(await forward(store(), forwards[2] ?? '')).toMatchObject({ status: 'pending', attemptCount: 0 });
    });
  });
}
