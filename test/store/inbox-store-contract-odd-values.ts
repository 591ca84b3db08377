import { describe, expect, it } from 'vitest';
import type { InboxStore } from '../../src/store/inbox-store.js';
import { newDelivery } from './delivery-factory.js';

/**
 * Values a sender controls that a database's text type may not hold as
 * they are: NUL (PostgreSQL text cannot hold it) and lone UTF-16
 * surrogates (no UTF-8 for them). Ids and source filters come from request
 * paths.
 */
export function describeOddValuesContract(store: () => InboxStore): void {
  describe('odd values', () => {
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
