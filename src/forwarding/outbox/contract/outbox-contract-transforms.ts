import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { claim, claimedOne, deliver, forward, forwardOf, outcome, T0 } from './outbox-contract-support.js';

/** A forward remembers its route's transform; each attempt records the one that ran; a dropped forward is cancelled (CONTRACT 10). */
export function describeTransformContract(store: () => InboxDatabase): void {
  describe('transforms', () => {
    it("keeps the route's transform on the forward, and none where the route has none", async () => {
      const delivered = await deliver(store(), { to: ['app', 'worker'], transforms: ['slack-text', null] });
      const forwards = await store().outbox.forwardsOf(delivered.id);
      expect(forwards.map((f) => [f.destination, f.transform])).toEqual([
        ['app', 'slack-text'],
        ['worker', null],
      ]);
      const [claimed] = await claim(store(), T0 + 10);
      expect(claimed?.forward.transform).toBe('slack-text');
    });

    it('keeps the transform of a forward created to send again', async () => {
      const delivered = await deliver(store());
      const created = await store().outbox.create(delivered.id, { id: 'fwd_again', destination: 'app', transform: 'x' }, T0 + 5);
      expect(created?.transform).toBe('x');
    });

    it('records the transform that ran with each attempt, and null where none did', async () => {
      const delivered = await deliver(store(), { transforms: ['shape'] });
      const id = forwardOf(delivered);
      const first = await claim(store(), T0 + 10);
      await store().outbox.settle([
        outcome(
          claimedOne(first, id),
          T0 + 10,
          { state: 'pending', at: T0 + 100 },
          { transform: { name: 'shape', version: 'aaaaaaaaaaaa' } },
        ),
      ]);
      const second = await claim(store(), T0 + 100);
      await store().outbox.settle([outcome(claimedOne(second, id), T0 + 100, { state: 'succeeded' })]);
      const [found] = await store().outbox.forwardsOf(delivered.id);
      expect(found?.attempts.map((a) => a.transform)).toEqual([{ name: 'shape', version: 'aaaaaaaaaaaa' }, null]);
    });

    it('settles a dropped forward as cancelled with its reason, not as a failure of the destination', async () => {
      const delivered = await deliver(store(), { transforms: ['shape'] });
      const id = forwardOf(delivered);
      const claimed = await claim(store(), T0 + 10);
      const settled = await store().outbox.settle([
        outcome(
          claimedOne(claimed, id),
          T0 + 10,
          { state: 'cancelled' },
          { status: null, error: 'dropped by transform shape', transform: { name: 'shape', version: 'bbbbbbbbbbbb' } },
        ),
      ]);
      expect(settled).toBe(1);
      expect(await forward(store(), id)).toMatchObject({
        status: 'cancelled',
        nextAttemptAt: null,
        leaseUntil: null,
        lease: null,
        lastError: 'dropped by transform shape',
      });
      const [state] = await store().outbox.destinations();
      expect(state?.lastFailureAt ?? null).toBeNull();
      expect(await claim(store(), T0 + 100_000)).toEqual([]);
    });
  });
}
