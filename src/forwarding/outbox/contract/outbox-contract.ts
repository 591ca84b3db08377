import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { freshStoreEachTest, type OpenStore } from '../../../../test/helpers/store-fixtures.js';
import { describeClaimContract, describeSettleContract } from './outbox-contract-claims.js';
import { describeCommitLeaseContract } from './outbox-contract-commit-lease.js';
import { describeLeaseContract } from './outbox-contract-leases.js';
import { describeManageContract } from './outbox-contract-manage.js';
import { describeClaimBoundContract, describePullContract } from './outbox-contract-pull.js';
import { describeOrderedContract } from './outbox-contract-ordered.js';
import { describeRenewalContract } from './outbox-contract-renewal.js';
import { describeStateContract } from './outbox-contract-state.js';
import { describeTransformContract } from './outbox-contract-transforms.js';
import { describeDeadLetterContract } from './outbox-contract-dead-letters.js';
import { describeCircuitContract } from './outbox-contract-circuit.js';
import { claim, deliver, deliverAll, deliveryTo, forwardOf, outcome, T0 } from './outbox-contract-support.js';

/**
 * The behaviour every Outbox backend owes the forwarder and the API
 * (CONTRACT 6), written against `store.outbox` and `InboxDatabase` only, with
 * every time given explicitly: `outbox.test.ts` runs it on a SQLite file
 * and on PostgreSQL in a fresh schema.
 */
export function describeOutbox(name: string, open: OpenStore): void {
  describe(`Outbox contract: ${name}`, () => {
    const store = freshStoreEachTest(open);

    describeCreationContract(store);
    describeClaimContract(store);
    describeSettleContract(store);
    describeLeaseContract(store);
    describeRenewalContract(store);
    describeCommitLeaseContract(store);
    describeOrderedContract(store);
    describeManageContract(store);
    describePullContract(store);
    describeClaimBoundContract(store);
    describeStateContract(store);
    describeTransformContract(store);
    describeDeadLetterContract(store);
    describeCircuitContract(store);
  });
}

function describeCreationContract(store: () => InboxDatabase): void {
  describe('forwards created with their delivery', () => {
    it('creates one pending forward per destination, due at once, with nothing attempted', async () => {
      const delivered = await deliver(store(), { source: 'stripe', to: ['app', 'worker'], at: T0 + 5 });
      const forwards = await store().outbox.forwardsOf(delivered.id);
      expect(forwards.map((f) => f.id)).toEqual(delivered.forwards);
      for (const [i, destination] of ['app', 'worker'].entries()) {
        expect(forwards[i]).toMatchObject({
          deliveryId: delivered.id,
          deliverySeq: delivered.seq,
          source: 'stripe',
          destination,
          status: 'pending',
          attemptCount: 0,
          budgetUsed: 0,
          budgetStartedAt: T0 + 5,
          nextAttemptAt: T0 + 5,
          leaseUntil: null,
          createdAt: T0 + 5,
          updatedAt: T0 + 5,
          lastStatus: null,
          lastError: null,
          attempts: [],
        });
      }
      const [first, second] = forwards;
      expect(second?.position).toBeGreaterThan(first?.position ?? Infinity);
      expect({ ...(await store().outbox.get(forwardOf(delivered))), attempts: [] }).toEqual(first);
    });

    it('keeps no forward of a batch that could not be committed', async () => {
      const good = deliveryTo();
      const clash = { ...deliveryTo(), id: good.id };
      await expect(store().append([good, clash])).rejects.toBeInstanceOf(Error);
      for (const f of [...good.forwards, ...clash.forwards]) expect(await store().outbox.get(f.id)).toBeUndefined();
      expect(await store().outbox.list({ limit: 10 })).toEqual([]);
    });

    it('keeps no delivery of a batch whose forward could not be stored', async () => {
      const [first] = await deliverAll(store(), [{ forwardIds: ['fwd_taken'] }]);
      const innocent = deliveryTo();
      const clash = deliveryTo({ forwardIds: ['fwd_taken'] });
      await expect(store().append([innocent, clash])).rejects.toBeInstanceOf(Error);
      expect(await store().get(innocent.id)).toBeUndefined();
      expect(await store().get(clash.id)).toBeUndefined();
      expect((await store().outbox.get('fwd_taken'))?.deliveryId).toBe(first?.id);
    });

    it('creates nothing for a duplicate, in a later batch or in the same one', async () => {
      const original = await deliver(store(), { dedupKey: 'evt_1', to: ['app'] });
      const later = await deliver(store(), { dedupKey: 'evt_1', to: ['app', 'worker'] });
      const [again, fresh] = await deliverAll(store(), [{ dedupKey: 'evt_1' }, { dedupKey: 'evt_2' }]);
      expect([later.duplicate, again?.duplicate, fresh?.duplicate]).toEqual([true, true, false]);
      for (const id of [...later.forwards, ...(again?.forwards ?? [])]) expect(await store().outbox.get(id)).toBeUndefined();
      expect((await store().outbox.forwardsOf(original.id)).map((f) => f.id)).toEqual(original.forwards);
      expect((await store().outbox.list({ limit: 10 })).map((f) => f.id).sort()).toEqual(
        [...original.forwards, ...(fresh?.forwards ?? [])].sort(),
      );
    });

    it('shows the forwards with their status on get, list and readAfter', async () => {
      const bare = await deliver(store(), { to: [] });
      const delivered = await deliver(store(), { to: ['app', 'worker'] });
      const [claimed] = await claim(store(), T0);
      if (claimed === undefined) throw new Error('nothing claimed');
      const expected = [
        { destination: 'app', status: 'delivering' },
        { destination: 'worker', status: 'pending' },
      ];
      expect((await store().get(delivered.id))?.forwards).toEqual(expected);
      expect((await store().list({ limit: 10 })).map((d) => d.forwards)).toEqual([expected, undefined]);
      expect((await store().readAfter(0, 10)).map((d) => d.forwards)).toEqual([undefined, expected]);
      expect((await store().get(bare.id))?.forwards).toBeUndefined();

      expect(await store().outbox.settle([outcome(claimed.forward, T0, { state: 'succeeded' })])).toBe(1);
      expect((await store().get(delivered.id))?.forwards).toEqual([{ destination: 'app', status: 'succeeded' }, expected[1]]);
    });
  });
}
