import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../inbox-database.js';
import { newDelivery } from '../../../test/helpers/delivery-factory.js';

/**
 * Values a sender controls that a database's text type may not hold as
 * they are: NUL (PostgreSQL text cannot hold it), backslashes (what an
 * escape would use) and lone UTF-16 surrogates (no UTF-8 for them). A
 * dedup key comes from the sender (Stripe's event `id` is read from the
 * JSON body, where `\u0000` is valid), and ids and source filters come
 * from request paths.
 */
export function describeOddValuesContract(store: () => InboxDatabase): void {
  describe('odd values', () => {
    it('keeps a dedup key that holds NUL exactly, and compares it whole', async () => {
      const key = 'evt_1\u0000tail';
      const first = newDelivery({ dedupKey: key });
      const [stored] = await store().append([first]);
      expect((await store().get(first.id))?.dedupKey).toBe(key);
      const outcomes = await store().append([
        newDelivery({ dedupKey: key }),
        newDelivery({ dedupKey: 'evt_1' }),
        newDelivery({ dedupKey: 'evt_1\u0000' }),
        newDelivery({ dedupKey: 'evt_1\u0000tail\u0000' }),
        newDelivery({ dedupKey: '\u0000' }),
      ]);
      expect(outcomes.map((o) => o.duplicate)).toEqual([true, false, false, false, false]);
      expect(outcomes[0]?.id).toBe(stored?.id);
    });

    it('keeps dedup keys with backslashes and NULs apart from each other, and each exactly', async () => {
      const keys = ['\\0', '\u0000', '\\\u0000', '\\\\0', '\\', '\\\\', 'a\\u0000', 'a\u0000', '\\ud800'];
      const batch = keys.map((dedupKey) => newDelivery({ dedupKey }));
      const outcomes = await store().append(batch);
      expect(outcomes.map((o) => o.duplicate)).toEqual(keys.map(() => false));
      for (const delivery of batch) expect((await store().get(delivery.id))?.dedupKey).toBe(delivery.dedupKey);
      const repeats = await store().append(keys.map((dedupKey) => newDelivery({ dedupKey })));
      expect(repeats.map((o) => o.id)).toEqual(batch.map((d) => d.id));
    });

    it('never takes two keys that differ in a lone surrogate for the same one, and keeps each exactly', async () => {
      const keys = ['evt_\ud800', 'evt_\udbff', 'evt_\udc00', 'evt_\ufffd', 'evt_\udfff\ud800', 'evt_\u{10000}'];
      const batch = keys.map((dedupKey) => newDelivery({ dedupKey }));
      const outcomes = await store().append(batch);
      expect(outcomes.map((o) => o.duplicate)).toEqual(keys.map(() => false));
      for (const delivery of batch) expect((await store().get(delivery.id))?.dedupKey).toBe(delivery.dedupKey);
      const repeats = await store().append([...keys].reverse().map((dedupKey) => newDelivery({ dedupKey })));
      expect(repeats.map((o) => o.id)).toEqual(batch.map((d) => d.id).reverse());
    });

    it('finds nothing by an id or a source that no delivery can have, and deletes nothing', async () => {
      const kept = newDelivery({ source: 'kept' });
      await store().append([kept]);
      for (const odd of ['\u0000', `${kept.id}\u0000`, `\u0000${kept.id}`, 'a\u0000b', '\ud800', '\udfff', '', '\\0']) {
        expect(await store().get(odd), JSON.stringify(odd)).toBeUndefined();
        expect(await store().delete(odd), JSON.stringify(odd)).toBe(false);
      }
      for (const odd of ['\u0000', 'kept\u0000', '\ud800']) {
        expect(await store().list({ limit: 10, source: odd }), JSON.stringify(odd)).toEqual([]);
        expect(await store().readAfter(0, 10, odd), JSON.stringify(odd)).toEqual([]);
      }
      expect((await store().get(kept.id))?.source).toBe('kept');
    });
  });
}
