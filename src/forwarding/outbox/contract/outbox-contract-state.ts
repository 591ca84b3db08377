import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import type { DestinationState } from '../outbox.js';
import { closedCircuit } from '../../circuit/circuit.js';
import { claim, claimedOne, deliver, deliverAll, forward, forwardOf, outcome, T0 } from './outbox-contract-support.js';

const idle = (name: string): DestinationState => ({
  name,
  paused: false,
  pending: 0,
  failed: 0,
  oldestPendingAt: null,
  lastSuccessAt: null,
  lastFailureAt: null,
  lastError: null,
  circuit: closedCircuit(),
});

/** What the destinations list shows, and what retention and deletes do to forwards. */
export function describeStateContract(store: () => InboxDatabase): void {
  describe('destinations', () => {
    it('is empty when nothing was forwarded or paused', async () => {
      expect(await store().outbox.destinations()).toEqual([]);
    });

    it('counts pending and delivering as pending, and failed apart, with the oldest unsettled creation time', async () => {
      const delivered = await deliverAll(store(), [
        { at: T0 + 10 },
        { at: T0 + 20 },
        { at: T0 + 30 },
        { at: T0 + 40, to: ['app', 'worker'] },
      ]);
      const claimed = await claim(store(), T0 + 100, { max: 3 });
      await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(delivered[0])), T0 + 100, { state: 'succeeded' }, { durationMs: 5 }),
        outcome(
          claimedOne(claimed, forwardOf(delivered[1])),
          T0 + 100,
          { state: 'failed' },
          { error: 'HTTP 410', status: 410, durationMs: 7 },
        ),
      ]);
      expect(await store().outbox.destinations()).toEqual([
        {
          ...idle('app'),
          pending: 2,
          failed: 1,
          oldestPendingAt: T0 + 30,
          lastSuccessAt: T0 + 105,
          lastFailureAt: T0 + 107,
          lastError: 'HTTP 410',
        },
        { ...idle('worker'), pending: 1, oldestPendingAt: T0 + 40 },
      ]);
    });

    it('takes the oldest pending by its creation time, whatever order the forwards were stored in', async () => {
      await deliverAll(store(), [{ at: T0 + 500 }, { at: T0 + 300 }, { at: T0 + 400 }]);
      expect((await store().outbox.destinations())[0]?.oldestPendingAt).toBe(T0 + 300);
    });

    it('keeps the latest success and failure, not the last one recorded', async () => {
      const [late, early] = await deliverAll(store(), [{}, {}]);
      const claimed = await claim(store(), T0);
      await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(late)), T0 + 900, { state: 'pending', at: T0 + 2000 }, { error: 'late' }),
      ]);
      await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(early)), T0 + 100, { state: 'pending', at: T0 + 2000 }, { error: 'early' }),
      ]);
      expect((await store().outbox.destinations())[0]).toMatchObject({
        lastFailureAt: T0 + 925,
        lastError: 'late',
        lastSuccessAt: null,
      });
    });

    it('lists a paused destination with nothing in it, sorted by name, and shows the pause until it is lifted', async () => {
      await deliver(store(), { to: ['zeta', 'alpha'] });
      await store().outbox.setPaused('mid', true);
      await store().outbox.setPaused('zeta', true);
      expect((await store().outbox.destinations()).map((d) => [d.name, d.paused, d.pending])).toEqual([
        ['alpha', false, 1],
        ['mid', true, 0],
        ['zeta', true, 1],
      ]);
      await store().outbox.setPaused('zeta', false);
      expect((await store().outbox.destinations()).find((d) => d.name === 'zeta')?.paused).toBe(false);
    });
  });

  describe('list', () => {
    it('lists newest first, by destination, status and source, a page at a time below a position', async () => {
      const delivered = await deliverAll(store(), [
        { source: 'a', to: ['app', 'worker'] },
        { source: 'b' },
        { source: 'a' },
        { source: 'b', to: 'worker' },
      ]);
      const [a1app, a1worker, b2, a3, b4] = delivered.flatMap((d) => d.forwards);
      const listed = async (query: Parameters<InboxDatabase['outbox']['list']>[0]): Promise<string[]> =>
        (await store().outbox.list(query)).map((f) => f.id);
      expect(await listed({ limit: 10 })).toEqual([b4, a3, b2, a1worker, a1app]);
      expect(await listed({ limit: 10, destination: 'worker' })).toEqual([b4, a1worker]);
      expect(await listed({ limit: 10, source: 'a', destination: 'app' })).toEqual([a3, a1app]);
      const taken = claimedOne(await claim(store(), T0, { max: 1 }));
      expect(await listed({ limit: 10, status: 'delivering' })).toEqual([taken.id]);
      expect(await listed({ limit: 10, status: 'pending', destination: 'app' })).toEqual([a3, b2]);
      const page = await store().outbox.list({ limit: 2 });
      expect(page.map((f) => f.id)).toEqual([b4, a3]);
      expect(await listed({ limit: 2, beforePosition: page[1]?.position ?? 0 })).toEqual([b2, a1worker]);
      expect(await listed({ limit: 10, source: 'nobody' })).toEqual([]);
      expect(await store().outbox.forwardsOf('dlv_unknown')).toEqual([]);
    });
  });

  describe('retention and deletes', () => {
    it('prunes a delivery whose forwards all succeeded or were cancelled, and keeps one with a pending, delivering or failed forward', async () => {
      const old = T0 - 86_400_000;
      const [done, cancelled, pending, delivering, gone, none] = await deliverAll(store(), [
        { at: old, to: ['app', 'worker'] },
        { at: old + 1 },
        { at: old + 2 },
        { at: old + 3 },
        { at: old + 4 },
        { at: old + 5, to: [] },
      ]);
      const claimed = await claim(store(), T0, { max: 10 });
      const worker = claimedOne(await claim(store(), T0, { destination: 'worker' }));
      await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(done)), T0, { state: 'succeeded' }),
        outcome(worker, T0, { state: 'succeeded' }),
        outcome(claimedOne(claimed, forwardOf(pending)), T0, { state: 'pending', at: T0 + 1000 }),
        outcome(claimedOne(claimed, forwardOf(gone)), T0, { state: 'failed' }),
      ]);
      await store().outbox.cancel(forwardOf(cancelled), T0);
      expect(await store().pruneOlderThan(T0, 100)).toBe(3);
      const kept = await Promise.all(
        [done, cancelled, pending, delivering, gone, none].map(async (d) => (await store().get(d?.id ?? '')) !== undefined),
      );
      expect(kept).toEqual([false, false, true, true, true, false]);
      for (const id of [...(done?.forwards ?? []), forwardOf(cancelled)]) expect(await store().outbox.get(id)).toBeUndefined();
      expect((await forward(store(), forwardOf(delivering))).status).toBe('delivering');
    });

    it("deletes a delivery's forwards and their attempts with it", async () => {
      const delivered = await deliver(store(), { to: ['app', 'worker'] });
      const taken = claimedOne(await claim(store(), T0));
      await store().outbox.settle([outcome(taken, T0, { state: 'pending', at: T0 + 10 })]);
      expect(await store().delete(delivered.id)).toBe(true);
      expect(await store().outbox.forwardsOf(delivered.id)).toEqual([]);
      for (const id of delivered.forwards) expect(await store().outbox.get(id)).toBeUndefined();
      expect(await store().outbox.list({ limit: 10 })).toEqual([]);
      expect((await store().outbox.destinations()).map((d) => [d.name, d.pending, d.failed])).toEqual([['app', 0, 0]]);
      // A forward made again under the same id starts without the old attempts.
      const again = await deliver(store(), { forwardIds: [taken.id] });
      expect((await store().outbox.forwardsOf(again.id))[0]).toMatchObject({ id: taken.id, attemptCount: 0, attempts: [] });
    });

    it('ignores the outcome of a forward whose delivery was deleted meanwhile, and records the others of the batch', async () => {
      const [deleted, kept] = await deliverAll(store(), [{}, {}]);
      const claimed = await claim(store(), T0);
      await store().delete(deleted?.id ?? '');
      const answered = await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(deleted)), T0, { state: 'succeeded' }),
        outcome(claimedOne(claimed, forwardOf(kept)), T0, { state: 'succeeded' }),
      ]);
      expect(answered).toBe(1);
      expect((await forward(store(), forwardOf(kept))).status).toBe('succeeded');
      expect(await store().outbox.ack(forwardOf(deleted), claimedOne(claimed, forwardOf(deleted)).lease ?? '', T0)).toBe(
        'not_found',
      );
      const again = await deliver(store(), { forwardIds: [forwardOf(deleted)] });
      expect((await store().outbox.forwardsOf(again.id))[0]?.attempts).toEqual([]);
    });
  });
}
