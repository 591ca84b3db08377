import { describe, expect, it } from 'vitest';
import type { DeliveryFilter } from '../../deliveries/delivery-filter.js';
import type { NewDelivery, StoredDelivery } from '../../deliveries/delivery-store.js';
import type { InboxDatabase } from '../inbox-database.js';
import { BASE_TIME, newDelivery } from '../../../test/helpers/delivery-factory.js';

/** Runs the work behind the commits until there is none left (SQLite indexes the search text after the commit). */
export async function indexAll(store: InboxDatabase, derive: (d: StoredDelivery) => string | null = () => null): Promise<void> {
  for (let step = 0; step < 10_000; step++) {
    if (!(await store.indexStep({ maxMs: 1000, maxRows: 1000 }, derive)).more) return;
  }
  throw new Error('the index never caught up');
}

/** Appends the deliveries in one batch and indexes them; their seqs, in order. */
async function add(store: InboxDatabase, deliveries: readonly NewDelivery[]): Promise<number[]> {
  const outcomes = await store.append(deliveries);
  await indexAll(store);
  return outcomes.map((o) => o.seq);
}

async function seqs(store: InboxDatabase, filter: DeliveryFilter, beforeSeq?: number, limit = 100): Promise<number[]> {
  return (await store.list({ ...filter, limit, ...(beforeSeq === undefined ? {} : { beforeSeq }) })).map((d) => d.seq);
}

/** The seqs at `indexes`, newest first, as a list answers them. */
function pick(all: readonly number[], ...indexes: number[]): number[] {
  return indexes.map((i) => all[i] as number).sort((a, b) => b - a);
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/**
 * A small inbox with every dimension the filters look at:
 *   0 stripe  invoice.paid     verified  t+0   body "Alpha Customer"
 *   1 stripe  invoice.created  failed    t+10
 *   2 stripe  customer.created verified  t+20  header X-Trace: "trace-ÄÖÜ-42"
 *   3 github  push             none      t+30  body "alpha release"
 *   4 github  (none)           none      t+40
 *   5 stripe  invoices         none      t+50  (a type that begins "invoice" but not "invoice.")
 */
function sample(): NewDelivery[] {
  const at = (seconds: number): number => BASE_TIME + seconds * 1000;
  return [
    newDelivery({
      source: 'stripe',
      eventType: 'invoice.paid',
      verification: { status: 'verified', scheme: 'stripe' },
      receivedAt: at(0),
      raw: json({ type: 'invoice.paid', name: 'Alpha Customer' }),
    }),
    newDelivery({
      source: 'stripe',
      eventType: 'invoice.created',
      verification: { status: 'failed', scheme: 'stripe', reason: 'mismatch' },
      receivedAt: at(10),
    }),
    newDelivery({
      source: 'stripe',
      eventType: 'customer.created',
      verification: { status: 'verified', scheme: 'stripe' },
      receivedAt: at(20),
      headers: [
        ['content-type', 'application/json'],
        // Kept as HTTP keeps header bytes, one character per byte: the UTF-8 of "ÄÖÜ".
        ['X-Trace', Buffer.from('trace-ÄÖÜ-42', 'utf8').toString('latin1')],
      ],
    }),
    newDelivery({ source: 'github', eventType: 'push', receivedAt: at(30), raw: json({ note: 'alpha release' }) }),
    newDelivery({ source: 'github', eventType: null, receivedAt: at(40) }),
    newDelivery({ source: 'stripe', eventType: 'invoices', receivedAt: at(50) }),
  ];
}

/** list with filters, deleteMatching, eventTypes and the search of the store contract (CONTRACT 8). */
export function describeFindingContract(store: () => InboxDatabase): void {
  describe('event types', () => {
    it('keeps each delivery its event type, null for none, in list, get and readAfter', async () => {
      const all = await add(store(), sample());
      const listed = await store().list({ limit: 10 });
      expect(listed.map((d) => d.eventType)).toEqual([
        'invoices',
        null,
        'push',
        'customer.created',
        'invoice.created',
        'invoice.paid',
      ]);
      const first = listed.at(-1);
      expect((await store().get(first?.id ?? ''))?.eventType).toBe('invoice.paid');
      expect((await store().readAfter((all[0] ?? 0) - 1, 1))[0]?.eventType).toBe('invoice.paid');
    });

    it('counts deliveries per source and type, with the latest receivedAt, the most frequent first', async () => {
      await add(store(), [
        ...sample(),
        newDelivery({ source: 'stripe', eventType: 'invoice.paid', receivedAt: BASE_TIME + 99_000 }),
      ]);
      const types = await store().eventTypes({ limit: 100 });
      expect(types[0]).toEqual({ source: 'stripe', eventType: 'invoice.paid', count: 2, lastReceivedAt: BASE_TIME + 99_000 });
      expect(types.slice(1)).toEqual([
        { source: 'github', eventType: null, count: 1, lastReceivedAt: BASE_TIME + 40_000 },
        { source: 'github', eventType: 'push', count: 1, lastReceivedAt: BASE_TIME + 30_000 },
        { source: 'stripe', eventType: 'customer.created', count: 1, lastReceivedAt: BASE_TIME + 20_000 },
        { source: 'stripe', eventType: 'invoice.created', count: 1, lastReceivedAt: BASE_TIME + 10_000 },
        { source: 'stripe', eventType: 'invoices', count: 1, lastReceivedAt: BASE_TIME + 50_000 },
      ]);
      expect((await store().eventTypes({ source: 'github', limit: 100 })).map((t) => t.eventType)).toEqual([null, 'push']);
      expect(await store().eventTypes({ source: 'nobody', limit: 100 })).toEqual([]);
      expect(await store().eventTypes({ limit: 2 })).toHaveLength(2);
    });

    it('follows deletes: a count goes down, falls back to the next latest time, and a type at zero is gone', async () => {
      const early = newDelivery({ source: 'p', eventType: 'a', receivedAt: 1_000 });
      const late = newDelivery({ source: 'p', eventType: 'a', receivedAt: 5_000 });
      const other = newDelivery({ source: 'p', eventType: 'b', receivedAt: 9_000 });
      await add(store(), [early, late, other]);
      await store().delete(late.id);
      expect(await store().eventTypes({ source: 'p', limit: 10 })).toEqual([
        { source: 'p', eventType: 'a', count: 1, lastReceivedAt: 1_000 },
        { source: 'p', eventType: 'b', count: 1, lastReceivedAt: 9_000 },
      ]);
      await store().delete(other.id);
      expect((await store().eventTypes({ source: 'p', limit: 10 })).map((t) => t.eventType)).toEqual(['a']);
    });

    it('keeps a type with characters of every kind exactly, and finds it', async () => {
      const type = 'ünïcode.\u{1f600}.日本 "quoted" %_\\';
      const [seq] = await add(store(), [newDelivery({ eventType: type })]);
      expect((await store().list({ limit: 1 }))[0]?.eventType).toBe(type);
      expect(await seqs(store(), { eventType: { exact: type } })).toEqual([seq]);
      expect(await seqs(store(), { eventType: { prefix: 'ünïcode.\u{1f600}' } })).toEqual([seq]);
      expect(await seqs(store(), { eventType: { prefix: 'ünïcode.\u{1f601}' } })).toEqual([]);
    });
  });

  describe('list filters, one at a time', () => {
    it('by source', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { source: 'github' })).toEqual(pick(all, 3, 4));
    });

    it('by event type, exactly', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { eventType: { exact: 'invoice.paid' } })).toEqual(pick(all, 0));
      expect(await seqs(store(), { eventType: { exact: 'invoice' } })).toEqual([]);
    });

    it('by event type prefix: what begins with it, and * alone: every delivery that has a type', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { eventType: { prefix: 'invoice.' } })).toEqual(pick(all, 0, 1));
      expect(await seqs(store(), { eventType: { prefix: 'invoice' } })).toEqual(pick(all, 0, 1, 5));
      expect(await seqs(store(), { eventType: { prefix: '' } })).toEqual(pick(all, 0, 1, 2, 3, 5));
    });

    it('by verification', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { verification: 'verified' })).toEqual(pick(all, 0, 2));
      expect(await seqs(store(), { verification: 'failed' })).toEqual(pick(all, 1));
      expect(await seqs(store(), { verification: 'none' })).toEqual(pick(all, 3, 4, 5));
    });

    it('by since (inclusive) and until (exclusive)', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { since: BASE_TIME + 20_000 })).toEqual(pick(all, 2, 3, 4, 5));
      expect(await seqs(store(), { until: BASE_TIME + 20_000 })).toEqual(pick(all, 0, 1));
      expect(await seqs(store(), { since: BASE_TIME + 20_000, until: BASE_TIME + 20_001 })).toEqual(pick(all, 2));
      expect(await seqs(store(), { since: BASE_TIME + 30_000, until: BASE_TIME + 30_000 })).toEqual([]);
    });

    it('by since and until exactly, whatever order the times came in and wherever they fall in ten minutes', async () => {
      // Three minutes apart over three hours, with some out of seq order (clocks of several instances, a
      // clock set back): mostly in order, so that the seqs of ten minutes are few and a wrong bound shows.
      const offsets = Array.from({ length: 60 }, (_, i) => i * 180_000 + (i % 7 === 3 ? -1_500_000 : 0) + (i % 5));
      const deliveries = offsets.map((offset) => newDelivery({ source: 'timed', receivedAt: BASE_TIME + offset }));
      const all = await add(store(), deliveries);
      const windows: Array<[number | undefined, number | undefined]> = [
        [BASE_TIME + 10 * 60_000, BASE_TIME + 20 * 60_000],
        [BASE_TIME + 10 * 60_000 - 1, BASE_TIME + 10 * 60_000 + 1],
        [BASE_TIME + 95 * 60_000 + 123, undefined],
        [undefined, BASE_TIME + 31 * 60_000],
        [BASE_TIME + 400 * 60_000, undefined],
      ];
      for (const [since, until] of windows) {
        const expected = all
          .filter((_, i) => {
            const at = deliveries[i]?.receivedAt ?? 0;
            return (since === undefined || at >= since) && (until === undefined || at < until);
          })
          .sort((a, b) => b - a);
        const filter = { source: 'timed', ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) };
        expect(await seqs(store(), filter), JSON.stringify(filter)).toEqual(expected);
        // A page at a time, too.
        const paged: number[] = [];
        let cursor: number | undefined;
        for (;;) {
          const page = await seqs(store(), filter, cursor, 4);
          paged.push(...page);
          if (page.length < 4) break;
          cursor = page.at(-1);
        }
        expect(paged).toEqual(expected);
      }
    });

    it('by text in a body, ignoring case', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { text: 'ALPHA' })).toEqual(pick(all, 0, 3));
      expect(await seqs(store(), { text: 'alpha cust' })).toEqual(pick(all, 0));
      expect(await seqs(store(), { text: 'no such text' })).toEqual([]);
    });
  });

  describe('list filters, combined', () => {
    it('narrow each other', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { source: 'stripe', eventType: { prefix: 'invoice.' }, verification: 'verified' })).toEqual(
        pick(all, 0),
      );
      expect(await seqs(store(), { source: 'stripe', verification: 'verified', since: BASE_TIME + 1 })).toEqual(pick(all, 2));
      expect(await seqs(store(), { source: 'github', text: 'alpha' })).toEqual(pick(all, 3));
      expect(await seqs(store(), { eventType: { prefix: '' }, until: BASE_TIME + 35_000, text: 'alpha' })).toEqual(
        pick(all, 0, 3),
      );
      expect(
        await seqs(store(), {
          source: 'stripe',
          eventType: { exact: 'invoice.paid' },
          verification: 'verified',
          since: BASE_TIME,
          until: BASE_TIME + 1,
          text: 'customer',
        }),
      ).toEqual(pick(all, 0));
      expect(await seqs(store(), { source: 'github', eventType: { exact: 'invoice.paid' } })).toEqual([]);
    });

    it('page without a gap or a repeat while matching deliveries arrive, the new ones at the front', async () => {
      const filter: DeliveryFilter = { source: 'stripe', eventType: { prefix: 'order.' }, text: 'needle' };
      const matching = (i: number): NewDelivery =>
        newDelivery({ source: 'stripe', eventType: `order.${i % 3}`, raw: json({ i, note: `a NEEDLE ${i}` }) });
      const noise = (i: number): NewDelivery[] => [
        newDelivery({ source: 'stripe', eventType: 'order.x', raw: json({ i, note: 'no match' }) }),
        newDelivery({ source: 'github', eventType: 'order.x', raw: json({ i, note: 'needle elsewhere' }) }),
        newDelivery({ source: 'stripe', eventType: 'refund', raw: json({ i, note: 'needle' }) }),
      ];
      const before = await add(store(), Array.from({ length: 10 }, (_, i) => [matching(i), ...noise(i)]).flat());
      const expected = before.filter((_, index) => index % 4 === 0).reverse();
      const seen: number[] = [];
      let cursor: number | undefined;
      for (let page = 0; page < 20; page++) {
        const rows = await seqs(store(), filter, cursor, 3);
        seen.push(...rows);
        if (rows.length < 3) break;
        cursor = rows.at(-1);
        // Arrivals between pages land above every cursor handed out.
        await add(store(), [matching(100 + page), ...noise(100 + page)]);
      }
      expect(seen).toEqual(expected);
      expect(new Set(seen).size).toBe(seen.length);
    });
  });

  describe('on a larger inbox, where the stores read differently', () => {
    it('a type prefix with thousands of deliveries, and a search whose hits are far below the newest, page exactly', async () => {
      // 5,200 of prefix "bulk." (more than either store sorts), the needle in 3 near the top and 4 far below.
      const deliveries = Array.from({ length: 5200 }, (_, i) =>
        newDelivery({
          source: i % 2 === 0 ? 'even' : 'odd',
          eventType: i % 10 === 0 ? 'other' : `bulk.${i % 3}`,
          raw: json({ i, note: [5, 17, 33, 5150, 5170, 5190, 5199].includes(i) ? 'find the NEEDLE' : 'hay' }),
        }),
      );
      const all: number[] = [];
      for (let i = 0; i < deliveries.length; i += 1000)
        all.push(...(await store().append(deliveries.slice(i, i + 1000))).map((o) => o.seq));
      await indexAll(store());
      const expected = (keep: (d: NewDelivery) => boolean): number[] =>
        all.filter((_, i) => keep(deliveries[i] as NewDelivery)).reverse();
      const walk = async (filter: DeliveryFilter, size: number, pages: number): Promise<number[]> => {
        const seen: number[] = [];
        let cursor: number | undefined;
        for (let page = 0; page < pages; page++) {
          const rows = await seqs(store(), filter, cursor, size);
          seen.push(...rows);
          if (rows.length < size) break;
          cursor = rows.at(-1);
        }
        return seen;
      };
      const bulk = expected((d) => (d.eventType ?? '').startsWith('bulk.'));
      expect(await walk({ eventType: { prefix: 'bulk.' } }, 50, 3)).toEqual(bulk.slice(0, 150));
      expect(await walk({ source: 'odd', eventType: { prefix: 'bulk.' } }, 50, 2)).toEqual(
        expected((d) => d.source === 'odd' && (d.eventType ?? '').startsWith('bulk.')).slice(0, 100),
      );
      const needles = expected((d) => d.raw.includes('NEEDLE'));
      expect(needles).toHaveLength(7);
      expect(await seqs(store(), { text: 'needle' })).toEqual(needles);
      expect(await walk({ text: 'needle' }, 2, 10)).toEqual(needles);
      expect(await seqs(store(), { text: 'needle', source: 'odd' })).toEqual(
        expected((d) => d.raw.includes('NEEDLE') && d.source === 'odd'),
      );
      expect(await store().countMatching({ text: 'needle' }, 100)).toBe(7);
    });
  });

  describe('search text', () => {
    it('finds text in a header value, sent as UTF-8, ignoring case in ASCII and beyond', async () => {
      const all = await add(store(), sample());
      expect(await seqs(store(), { text: 'trace-äöü-42' })).toEqual(pick(all, 2));
      expect(await seqs(store(), { text: 'TRACE-ÄÖÜ' })).toEqual(pick(all, 2));
      expect(await seqs(store(), { text: 'ÄÖÜ-4' })).toEqual(pick(all, 2));
      // Header names are not searched.
      expect(await seqs(store(), { text: 'X-Trace' })).toEqual([]);
    });

    it('finds text with multi-byte characters, and next to bytes that are not UTF-8', async () => {
      const raw = Buffer.concat([
        Buffer.from('{"city":"Zürich 日本語'),
        Buffer.from([0xff, 0xc3]),
        Buffer.from('tail\u{1f600}end"}'),
      ]);
      const [seq] = await add(store(), [newDelivery({ raw }), newDelivery({ raw: json({ city: 'Zurich' }) })]);
      expect(await seqs(store(), { text: 'zürich' })).toEqual([seq]);
      expect(await seqs(store(), { text: '本語' + '\ufffd' })).toEqual([seq]);
      expect(await seqs(store(), { text: '\ufffd\ufffdtail' })).toEqual([seq]);
      expect(await seqs(store(), { text: 'tail\u{1f600}e' })).toEqual([seq]);
      expect(await seqs(store(), { text: '\u{1f600}en' })).toEqual([seq]);
    });

    it('finds the text itself, not its pieces in other places, nor across two header values', async () => {
      const [scattered, whole] = await add(store(), [
        newDelivery({
          raw: json({ a: 'abcd', b: 'xcde' }),
          headers: [
            ['X-One', 'zzab'],
            ['X-Two', 'cdzz'],
          ],
        }),
        newDelivery({ raw: json({ a: 'abcde' }) }),
      ]);
      expect(scattered).toBeDefined();
      expect(await seqs(store(), { text: 'abcde' })).toEqual([whole]);
      expect(await seqs(store(), { text: 'zzabcdzz' })).toEqual([]);
    });

    it('takes %, _, \\ and quotes literally', async () => {
      const [plain, special] = await add(store(), [
        newDelivery({ raw: json({ v: 'abcdef 100 percent' }) }),
        newDelivery({ raw: Buffer.from('{"v":"100% a_b c\\\\d \\"q\\""}') }),
      ]);
      expect(plain).toBeDefined();
      expect(await seqs(store(), { text: '100%' })).toEqual([special]);
      expect(await seqs(store(), { text: 'a_b' })).toEqual([special]);
      expect(await seqs(store(), { text: 'c\\\\d' })).toEqual([special]);
      expect(await seqs(store(), { text: '\\"q\\"' })).toEqual([special]);
      expect(await seqs(store(), { text: '%%%' })).toEqual([]);
    });

    it('finds text anywhere in a large body, across the places an index may cut it', async () => {
      const filler = 'abcdefghij'.repeat(30_000);
      // The search text is the header values, then the body: "application/json\n{"a":"" is 23 characters, so
      // MARKER-ONE begins at 65,531 and spans 65,536, where SQLite's index begins its second chunk.
      const cut = 65_536 - 5 - 23;
      const body = `{"a":"${filler.slice(0, cut)}MARKER-ONE${filler.slice(cut, 200_000)}MARKER-TWO${filler.slice(200_000)}"}`;
      const [seq] = await add(store(), [
        newDelivery({ raw: Buffer.from(body), headers: [['content-type', 'application/json']] }),
        newDelivery(),
      ]);
      expect(await seqs(store(), { text: 'marker-one' })).toEqual([seq]);
      expect(await seqs(store(), { text: 'marker-two' })).toEqual([seq]);
      expect(await seqs(store(), { text: `${filler.slice(cut - 3, cut)}MARKER-ONE${filler.slice(cut, cut + 3)}` })).toEqual([
        seq,
      ]);
      const listed = await store().list({ text: 'abcdefghij', limit: 10 });
      expect(listed.map((d) => d.seq)).toEqual([seq]);
    });

    it('stops a page at maxBytes under a search too', async () => {
      const all = await add(
        store(),
        Array.from({ length: 4 }, (_, i) => newDelivery({ raw: json({ i, pad: 'z'.repeat(1000), word: 'findme' }) })),
      );
      const page = await store().list({ text: 'findme', limit: 10, maxBytes: 1500 });
      expect(page.map((d) => d.seq)).toEqual(pick(all, 3, 2));
    });
  });

  describe('countMatching', () => {
    it('counts what the filters match, up to the limit', async () => {
      await add(store(), sample());
      expect(await store().countMatching({}, 100)).toBe(6);
      expect(await store().countMatching({}, 4)).toBe(4);
      expect(await store().countMatching({ source: 'stripe', eventType: { prefix: 'invoice' } }, 100)).toBe(3);
      expect(await store().countMatching({ text: 'alpha' }, 100)).toBe(2);
      expect(await store().countMatching({ text: 'alpha' }, 1)).toBe(1);
      expect(await store().countMatching({ verification: 'failed', text: 'alpha' }, 100)).toBe(0);
    });
  });

  describe('deleteMatching', () => {
    it('deletes the newest matching below beforeSeq, at most limit, and says the lowest seq it deleted', async () => {
      const all = await add(store(), sample());
      const first = await store().deleteMatching({ source: 'stripe' }, (all[5] ?? 0) + 1, 2);
      expect(first).toEqual({ deleted: 2, lowestSeq: all[2] });
      expect(await seqs(store(), {})).toEqual(pick(all, 0, 1, 3, 4));
      const rest = await store().deleteMatching({ source: 'stripe' }, all[2] ?? 0, 10);
      expect(rest).toEqual({ deleted: 2, lowestSeq: all[0] });
      expect(await seqs(store(), {})).toEqual(pick(all, 3, 4));
      expect(await store().deleteMatching({ source: 'stripe' }, Number.MAX_SAFE_INTEGER, 10)).toEqual({
        deleted: 0,
        lowestSeq: undefined,
      });
    });

    it('leaves deliveries at or above beforeSeq, and those that do not match, with their counts right', async () => {
      const all = await add(store(), sample());
      const result = await store().deleteMatching({ text: 'alpha' }, all[3] ?? 0, 10);
      expect(result.deleted).toBe(1);
      expect(await seqs(store(), { text: 'alpha' })).toEqual(pick(all, 3));
      expect((await store().sources()).find((s) => s.source === 'stripe')?.count).toBe(3);
      expect((await store().eventTypes({ source: 'stripe', limit: 10 })).map((t) => t.eventType)).not.toContain('invoice.paid');
    });

    it('takes the forwards of what it deletes along', async () => {
      const delivery = newDelivery({ forwards: [{ id: `fwd-${Date.now()}`, destination: 'app' }] });
      await add(store(), [delivery]);
      expect((await store().outbox.list({ limit: 10 })).length).toBe(1);
      expect((await store().deleteMatching({ source: delivery.source }, Number.MAX_SAFE_INTEGER, 10)).deleted).toBe(1);
      expect(await store().outbox.list({ limit: 10 })).toEqual([]);
    });
  });
}
