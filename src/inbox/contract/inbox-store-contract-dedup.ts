import { describe, expect, it } from 'vitest';
import type { AppendOutcome } from '../../deliveries/delivery-store.js';
import type { InboxDatabase } from '../inbox-database.js';
import { newDelivery } from '../../../test/helpers/delivery-factory.js';

function only(outcomes: AppendOutcome[], index: number): AppendOutcome {
  const outcome = outcomes[index];
  if (outcome === undefined) throw new Error(`no outcome at ${index}`);
  return outcome;
}

/** Deduplication of the store contract: one row per (source, dedupKey). */
export function describeDedupContract(store: () => InboxDatabase): void {
  describe('dedup', () => {
    it('stores a repeat in the same batch once and answers it with the first delivery', async () => {
      const first = newDelivery({ dedupKey: 'evt_1' });
      const repeat = newDelivery({ dedupKey: 'evt_1', raw: Buffer.from('{"again":true}') });
      const outcomes = await store().append([first, repeat]);
      const stored = only(outcomes, 0);
      expect(stored).toEqual({ id: first.id, seq: stored.seq, receivedAt: first.receivedAt, duplicate: false });
      expect(only(outcomes, 1)).toEqual({ id: first.id, seq: stored.seq, receivedAt: first.receivedAt, duplicate: true });
      expect(await store().get(repeat.id)).toBeUndefined();
      expect((await store().get(first.id))?.raw.equals(first.raw)).toBe(true);
      expect((await store().list({ limit: 10 })).map((d) => d.id)).toEqual([first.id]);
      expect(await store().sources()).toEqual([{ source: 'github', count: 1, lastReceivedAt: first.receivedAt }]);
    });

    it('stores a repeat in a later batch once and answers it with the first delivery', async () => {
      const first = newDelivery({ dedupKey: 'evt_2' });
      const [stored] = await store().append([first]);
      const repeat = newDelivery({ dedupKey: 'evt_2' });
      const [again] = await store().append([repeat]);
      expect(again).toEqual({ id: first.id, seq: stored?.seq, receivedAt: first.receivedAt, duplicate: true });
      expect(await store().get(repeat.id)).toBeUndefined();
      expect(await store().list({ limit: 10 })).toHaveLength(1);
    });

    it('keeps batch order and fresh seqs around a repeat', async () => {
      const [original] = await store().append([newDelivery({ dedupKey: 'k' })]);
      const before = newDelivery();
      const repeat = newDelivery({ dedupKey: 'k' });
      const after = newDelivery();
      const outcomes = await store().append([before, repeat, after]);
      expect(outcomes.map((o) => o.duplicate)).toEqual([false, true, false]);
      expect(only(outcomes, 0).id).toBe(before.id);
      expect(only(outcomes, 1).seq).toBe(original?.seq);
      expect(only(outcomes, 2).id).toBe(after.id);
      expect(only(outcomes, 2).seq).toBeGreaterThan(only(outcomes, 0).seq);
      const ids = (await store().list({ limit: 10 })).map((d) => d.id);
      expect(ids).toEqual([after.id, before.id, original?.id]);
    });

    it('treats the same key on different sources as different deliveries', async () => {
      const onGithub = newDelivery({ source: 'github', dedupKey: 'same' });
      const onStripe = newDelivery({ source: 'stripe', dedupKey: 'same' });
      const onUpper = newDelivery({ source: 'GitHub', dedupKey: 'same' });
      const outcomes = await store().append([onGithub, onStripe, onUpper]);
      expect(outcomes.map((o) => o.duplicate)).toEqual([false, false, false]);
      expect(outcomes.map((o) => o.id)).toEqual([onGithub.id, onStripe.id, onUpper.id]);
      expect(await store().list({ limit: 10 })).toHaveLength(3);
    });

    it('never lets null keys collide', async () => {
      const batch = [newDelivery({ dedupKey: null }), newDelivery({ dedupKey: null })];
      const first = await store().append(batch);
      const second = await store().append([newDelivery({ dedupKey: null })]);
      expect([...first, ...second].map((o) => o.duplicate)).toEqual([false, false, false]);
      expect(await store().list({ limit: 10 })).toHaveLength(3);
    });

    it('compares keys exactly', async () => {
      const outcomes = await store().append([
        newDelivery({ dedupKey: 'Evt' }),
        newDelivery({ dedupKey: 'evt' }),
        newDelivery({ dedupKey: 'evt ' }),
        newDelivery({ dedupKey: '' }),
      ]);
      expect(outcomes.map((o) => o.duplicate)).toEqual([false, false, false, false]);
    });

    it('answers every repeat of a key in one batch with the same first delivery', async () => {
      const batch = [newDelivery({ dedupKey: 'x' }), newDelivery({ dedupKey: 'x' }), newDelivery({ dedupKey: 'x' })];
      const outcomes = await store().append(batch);
      expect(outcomes.map((o) => o.id)).toEqual([batch[0]?.id, batch[0]?.id, batch[0]?.id]);
      expect(outcomes.map((o) => o.duplicate)).toEqual([false, true, true]);
      expect(new Set(outcomes.map((o) => o.seq)).size).toBe(1);
    });
  });
}
