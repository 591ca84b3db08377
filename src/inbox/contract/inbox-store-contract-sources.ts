import { describe, expect, it } from 'vitest';
import type { SourceQuery } from '../../deliveries/delivery-store.js';
import type { InboxDatabase } from '../inbox-database.js';
import { newDelivery } from '../../../test/helpers/delivery-factory.js';

/** One delivery per name, in one batch. */
async function appendSources(store: InboxDatabase, names: readonly string[]): Promise<void> {
  await store.append(names.map((source) => newDelivery({ source })));
}

async function names(store: InboxDatabase, query?: SourceQuery): Promise<string[]> {
  return (await store.sources(query)).map((s) => s.source);
}

/** Every page of `limit`, each after the last name of the one before, until a short page. */
async function walk(store: InboxDatabase, limit: number, search?: string): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await names(store, {
      limit,
      ...(after === undefined ? {} : { after }),
      ...(search === undefined ? {} : { search }),
    });
    pages.push(page);
    if (page.length < limit) return pages;
    after = page[page.length - 1];
  }
}

// In code point order. JavaScript's `<` compares UTF-16 units and would put
// the emoji (a surrogate pair, 0xD83D…) before U+FF5A; SQLite's BINARY and
// PostgreSQL's COLLATE "C" compare UTF-8 bytes, which is code point order.
const ORDERED = ['A', 'B', 'a', 'a b', 'a-b', 'ab', 'b', 'z', 'é', 'ѕtripe', '日本', '\uff5a', '\u{1f600}'];

/** sources({ limit, after, search }) of the store contract: pages by name and a search. */
export function describeSourcesContract(store: () => InboxDatabase): void {
  describe('sources, a page at a time', () => {
    it('orders by code point, whatever order they arrived in', async () => {
      await appendSources(store(), [...ORDERED].reverse());
      expect(await names(store())).toEqual(ORDERED);
    });

    it('answers at most limit, and goes on after a name, each source once across the pages', async () => {
      await appendSources(store(), [...ORDERED].reverse());
      expect(await names(store(), { limit: 3 })).toEqual(['A', 'B', 'a']);
      expect(await names(store(), { limit: 3, after: 'a' })).toEqual(['a b', 'a-b', 'ab']);
      // A name that is not a source still places the page: after "aa" comes "ab".
      expect(await names(store(), { limit: 2, after: 'aa' })).toEqual(['ab', 'b']);
      expect(await names(store(), { after: '\uff5a' })).toEqual(['\u{1f600}']);
      expect(await names(store(), { after: '\u{1f600}' })).toEqual([]);
      const pages = await walk(store(), 4);
      expect(pages.flat()).toEqual(ORDERED);
      expect(pages.map((page) => page.length)).toEqual([4, 4, 4, 1]);
    });

    it('keeps the count and the latest receivedAt of each source in a page', async () => {
      const early = newDelivery({ source: 'p', receivedAt: 1_000 });
      const late = newDelivery({ source: 'p', receivedAt: 5_000 });
      const other = newDelivery({ source: 'q', receivedAt: 3_000 });
      await store().append([early, late, other]);
      expect(await store().sources({ limit: 1, after: 'a' })).toEqual([{ source: 'p', count: 2, lastReceivedAt: 5_000 }]);
      expect(await store().sources({ limit: 5, after: 'p' })).toEqual([{ source: 'q', count: 1, lastReceivedAt: 3_000 }]);
    });

    it('searches names for a text, ignoring case in any script, and pages through the matches', async () => {
      await appendSources(store(), ['Stripe-Live', 'stripe-test', 'STRIPE', 'github', 'xstripey', 'ÄRGER', 'ЅTRIPE', 'stripped']);
      expect(await names(store(), { search: 'stripe' })).toEqual(['STRIPE', 'Stripe-Live', 'stripe-test', 'xstripey']);
      expect(await names(store(), { search: 'LIVE' })).toEqual(['Stripe-Live']);
      expect(await names(store(), { search: 'ärger' })).toEqual(['ÄRGER']);
      // The Cyrillic name is found by Cyrillic text only, never by the Latin one it looks like.
      expect(await names(store(), { search: 'ѕtripe' })).toEqual(['ЅTRIPE']);
      expect(await names(store(), { search: 'nothing' })).toEqual([]);
      const pages = await walk(store(), 2, 'STRIPE');
      expect(pages).toEqual([['STRIPE', 'Stripe-Live'], ['stripe-test', 'xstripey'], []]);
    });

    it('takes the search text literally: % and _ are no wildcards', async () => {
      await appendSources(store(), ['a_b', 'axb', '100%', '1000']);
      expect(await names(store(), { search: '_' })).toEqual(['a_b']);
      expect(await names(store(), { search: '%' })).toEqual(['100%']);
      expect(await names(store(), { search: "'" })).toEqual([]);
    });
  });
}
