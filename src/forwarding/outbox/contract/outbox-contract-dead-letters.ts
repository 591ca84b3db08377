import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import type { DeadLetter } from '../dead-letters.js';
import { LEASE_EXPIRED } from '../forward-row.js';
import { claim, claimedOne, deliverAll, forwardOf, LEASE_MS, outcome, T0 } from './outbox-contract-support.js';

/**
 * Every forward that goes to `failed` is told to `onDeadLetters` once its
 * transaction commits (docs/alerts.md: each is an occurrence of `dead_letters`):
 * by a settle, by a lease that ran out on a spent budget, by a nack; never a
 * retry, a success or an attempt that is not current.
 */
export function describeDeadLetterContract(store: () => InboxDatabase): void {
  describe('dead letters told', () => {
    it('tells each forward a settle, an expired lease or a nack fails, with its destination and error', async () => {
      const told: DeadLetter[] = [];
      const stop = store().outbox.onDeadLetters((letters) => told.push(...letters));
      const [settled, retried, succeeded, expired, nacked] = await deliverAll(store(), [{}, {}, {}, {}, {}]);
      const oneAttempt = { attempts: 1, maxAgeMs: 3_600_000 };
      const claimed = await claim(store(), T0, { budget: oneAttempt });
      await store().outbox.settle([
        outcome(claimedOne(claimed, forwardOf(settled)), T0, { state: 'failed' }, { error: 'HTTP 500' }),
        outcome(claimedOne(claimed, forwardOf(retried)), T0, { state: 'pending', at: T0 + 100 }),
        outcome(claimedOne(claimed, forwardOf(succeeded)), T0, { state: 'succeeded' }),
      ]);
      // The same outcome again is not current: nothing more.
      await store().outbox.settle([outcome(claimedOne(claimed, forwardOf(settled)), T0, { state: 'failed' })]);
      expect(told).toEqual([{ destination: 'app', error: 'HTTP 500' }]);
      // The lease of `expired` runs out on a budget of one attempt; `nacked` is nacked with it spent.
      const nack = claimedOne(claimed, forwardOf(nacked));
      expect(await store().outbox.nack(nack.id, nack.lease ?? '', T0 + 10, T0 + 20, oneAttempt)).toBe('ok');
      await claim(store(), T0 + LEASE_MS, { max: 0, budget: oneAttempt });
      expect(told).toEqual([
        { destination: 'app', error: 'HTTP 500' },
        { destination: 'app', error: 'nack' },
        { destination: 'app', error: LEASE_EXPIRED },
      ]);
      expect((await store().outbox.get(forwardOf(expired)))?.status).toBe('failed');
      // Stopped: told no more.
      stop();
      await store().outbox.retry({ ids: [forwardOf(settled)] }, T0 + LEASE_MS + 1);
      const again = claimedOne(await claim(store(), T0 + LEASE_MS + 2, { max: 1 }));
      await store().outbox.settle([outcome(again, T0 + LEASE_MS + 2, { state: 'failed' })]);
      expect(told).toHaveLength(3);
    });
  });
}
