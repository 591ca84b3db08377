import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import type { ClaimRequest } from '../outbox.js';
import { claim, claimedOne, deliver, deliverAll, forwardOf, ids, LEASE_MS, outcome, T0 } from './outbox-contract-support.js';

const ordered = (now: number, request: Partial<ClaimRequest> = {}): [number, Partial<ClaimRequest>] => [
  now,
  { ordered: true, ...request },
];

/** Ordered destinations: per source, one forward at a time, in seq order. */
export function describeOrderedContract(store: () => InboxDatabase): void {
  describe('ordered claims', () => {
    /** Three deliveries of `a` and two of `b`, interleaved, all due at T0. */
    const fiveOfTwoSources = async (): Promise<{ a: string[]; b: string[] }> => {
      const delivered = await deliverAll(
        store(),
        ['a', 'b', 'a', 'b', 'a'].map((source) => ({ source })),
      );
      const of = (source: string): string[] => delivered.filter((d) => d.source === source).map(forwardOf);
      return { a: of('a'), b: of('b') };
    };

    it('claims only the oldest unsettled forward of each source, the sources side by side', async () => {
      const { a, b } = await fiveOfTwoSources();
      expect(ids(await claim(store(), ...ordered(T0))).sort()).toEqual([a[0], b[0]].sort());
      expect(await claim(store(), ...ordered(T0))).toEqual([]);
      // Unordered, the rest is claimable meanwhile.
      expect(ids(await claim(store(), T0))).toEqual([a[1], b[1], a[2]]);
    });

    it('claims the next of a source once its head has succeeded, and not before', async () => {
      const { a, b } = await fiveOfTwoSources();
      const heads = await claim(store(), ...ordered(T0));
      const headA = claimedOne(heads, a[0]);
      await store().outbox.settle([outcome(headA, T0, { state: 'succeeded' })]);
      expect(ids(await claim(store(), ...ordered(T0 + 1)))).toEqual([a[1]]);
      await store().outbox.settle([outcome(claimedOne(heads, b[0]), T0, { state: 'succeeded' })]);
      expect(ids(await claim(store(), ...ordered(T0 + 1)))).toEqual([b[1]]);
    });

    it('holds a source back while its head waits for a retry, however due the next one is', async () => {
      const { a, b } = await fiveOfTwoSources();
      const heads = await claim(store(), ...ordered(T0, { max: 1 }));
      expect(ids(heads)).toEqual([a[0]]);
      await store().outbox.settle([outcome(claimedOne(heads), T0, { state: 'pending', at: T0 + 5000 })]);
      expect(ids(await claim(store(), ...ordered(T0 + 1)))).toEqual([b[0]]);
      expect(await claim(store(), ...ordered(T0 + 4999))).toEqual([]);
      expect(ids(await claim(store(), ...ordered(T0 + 5000)))).toEqual([a[0]]);
    });

    it('lets a failed head or a cancelled one, pending or delivering, unblock the next', async () => {
      const { a, b } = await fiveOfTwoSources();
      expect(await store().outbox.cancel(a[0] ?? '', T0)).toBe(true);
      const heads = await claim(store(), ...ordered(T0));
      expect(ids(heads).sort()).toEqual([a[1], b[0]].sort());
      await store().outbox.settle([outcome(claimedOne(heads, a[1]), T0, { state: 'failed' })]);
      expect(await store().outbox.cancel(b[0] ?? '', T0 + 1)).toBe(true);
      expect(ids(await claim(store(), ...ordered(T0 + 2))).sort()).toEqual([a[2], b[1]].sort());
    });

    it('offers the same head again when its lease runs out, not the next one', async () => {
      const { a } = await fiveOfTwoSources();
      await claim(store(), ...ordered(T0));
      const again = await claim(store(), ...ordered(T0 + LEASE_MS));
      expect(ids(again)).toContain(a[0]);
      expect(claimedOne(again, a[0]).attemptCount).toBe(2);
      expect(ids(again)).not.toContain(a[1]);
    });

    it('does not claim a retried older forward while a later one of its source is delivering', async () => {
      const { a } = await fiveOfTwoSources();
      const head = claimedOne(await claim(store(), ...ordered(T0)), a[0]);
      await store().outbox.settle([outcome(head, T0, { state: 'failed' })]);
      const next = claimedOne(await claim(store(), ...ordered(T0 + 1)), a[1]);
      expect(await store().outbox.retry({ ids: [head.id] }, T0 + 2)).toBe(1);
      expect(ids(await claim(store(), ...ordered(T0 + 3)))).not.toContain(head.id);
      await store().outbox.settle([outcome(next, T0 + 1, { state: 'succeeded' })]);
      // The retried one is the oldest unsettled again: it goes before a[2].
      expect(ids(await claim(store(), ...ordered(T0 + 4)))).toEqual([head.id]);
    });

    it('does not claim a forward sent again of an older delivery while a later one of its source is delivering', async () => {
      const [older, later] = await deliverAll(store(), [{ source: 'a' }, { source: 'a' }]);
      const head = claimedOne(await claim(store(), ...ordered(T0)));
      await store().outbox.settle([outcome(head, T0, { state: 'succeeded' })]);
      const next = claimedOne(await claim(store(), ...ordered(T0 + 1)));
      expect(next.id).toBe(forwardOf(later));
      await store().outbox.create(older?.id ?? '', { id: 'fwd_again', destination: 'app' }, T0 + 2);
      expect(await claim(store(), ...ordered(T0 + 3))).toEqual([]);
      await store().outbox.settle([outcome(next, T0 + 1, { state: 'succeeded' })]);
      expect(ids(await claim(store(), ...ordered(T0 + 4)))).toEqual(['fwd_again']);
    });

    it('sends two forwards of one delivery to one destination one at a time, the first one first', async () => {
      const delivered = await deliver(store(), { source: 'a' });
      await store().outbox.create(delivered.id, { id: 'fwd_second', destination: 'app' }, T0);
      for (const id of [forwardOf(delivered), 'fwd_second']) {
        const claimed = await claim(store(), ...ordered(T0 + 1));
        expect(ids(claimed)).toEqual([id]);
        expect(await claim(store(), ...ordered(T0 + 1))).toEqual([]);
        await store().outbox.settle([outcome(claimedOne(claimed), T0 + 1, { state: 'succeeded' })]);
      }
    });
  });

  describe('nextDueAt', () => {
    it('is undefined when nothing of the destination waits', async () => {
      expect(await store().outbox.nextDueAt('app')).toBeUndefined();
      const delivered = await deliver(store(), { to: 'worker' });
      expect(await store().outbox.nextDueAt('app')).toBeUndefined();
      expect(await store().outbox.nextDueAt('worker')).toBe(T0);
      await store().outbox.cancel(forwardOf(delivered), T0);
      expect(await store().outbox.nextDueAt('worker')).toBeUndefined();
    });

    it("is the earliest due time or lease end of the destination's unsettled forwards", async () => {
      const [first, second] = await deliverAll(store(), [{ at: T0 + 200 }, { at: T0 + 100 }]);
      expect(await store().outbox.nextDueAt('app')).toBe(T0 + 100);
      const taken = claimedOne(await claim(store(), T0 + 150));
      expect(taken.id).toBe(forwardOf(second));
      expect(await store().outbox.nextDueAt('app')).toBe(T0 + 200);
      await store().outbox.settle([outcome(taken, T0 + 150, { state: 'pending', at: T0 + 170 })]);
      expect(await store().outbox.nextDueAt('app')).toBe(T0 + 170);
      claimedOne(await claim(store(), T0 + 300, { max: 2 }));
      expect(await store().outbox.nextDueAt('app')).toBe(T0 + 300 + LEASE_MS);
      expect((await store().outbox.get(forwardOf(first)))?.leaseUntil).toBe(T0 + 300 + LEASE_MS);
    });

    it('counts only the heads of the sources when ordered', async () => {
      const [headA] = await deliverAll(store(), [
        { source: 'a', at: T0 },
        { source: 'a', at: T0 + 10 },
        { source: 'b', at: T0 + 50 },
      ]);
      const head = claimedOne(await claim(store(), ...ordered(T0, { max: 1 })));
      expect(head.id).toBe(forwardOf(headA));
      await store().outbox.settle([outcome(head, T0, { state: 'pending', at: T0 + 5000 })]);
      expect(await store().outbox.nextDueAt('app')).toBe(T0 + 10);
      expect(await store().outbox.nextDueAt('app', true)).toBe(T0 + 50);
      claimedOne(await claim(store(), ...ordered(T0 + 60)));
      expect(await store().outbox.nextDueAt('app', true)).toBe(T0 + 5000);
      await store().outbox.cancel(head.id, T0 + 70);
      // a's next one is its head now; b's head is leased until later.
      expect(await store().outbox.nextDueAt('app', true)).toBe(T0 + 10);
    });
  });
}
