import { describe, expect, it } from 'vitest';
import type { NewRefusal, RefusalBounds, RefusalStore, StoredRefusal } from '../refusals.js';
import { newDelivery } from '../../../test/helpers/delivery-factory.js';
import { freshStoreEachTest, type OpenStore } from '../../../test/helpers/store-fixtures.js';
import { newRefusal, newRefusals } from './refusal-factory.js';

const WIDE: RefusalBounds = { perSource: 10_000, total: 100_000 };

/** Every refusal of `source` (or all), newest first, read a page of `pageSize` at a time. */
async function readAll(refusals: RefusalStore, source?: string, pageSize = 7): Promise<StoredRefusal[]> {
  const all: StoredRefusal[] = [];
  for (;;) {
    const last = all[all.length - 1];
    const page = await refusals.list({
      limit: pageSize,
      ...(source === undefined ? {} : { source }),
      ...(last === undefined ? {} : { beforeSeq: last.seq }),
    });
    all.push(...page);
    if (page.length < pageSize) return all;
  }
}

const ids = (refusals: readonly { id: string }[]): string[] => refusals.map((r) => r.id);
const newestFirst = (batch: readonly NewRefusal[]): string[] => ids(batch).reverse();

/**
 * What every backend's RefusalStore owes the rest of Reception (CONTRACT 9):
 * refusals read back as written, newest first, a page at a time, and never
 * more of them than the bounds, per source and in all.
 */
export function describeRefusalStore(name: string, open: OpenStore): void {
  describe(`RefusalStore contract: ${name}`, () => {
    const store = freshStoreEachTest(open);
    const refusals = (): RefusalStore => store().refusals;

    it('reads a refusal back exactly as written, with a seq', async () => {
      const refusal = newRefusal({
        source: 'stripe ü \u{1f600}',
        method: 'PUT',
        status: 413,
        code: 'payload_too_large',
        detail: 'The body is larger than 10 bytes. «quoted»',
        contentType: 'application/json; charset=utf-8',
        size: 123_456_789_012,
        headers: [
          ['X-Odd', 'caf\u00c3\u00a9'],
          ['Authorization', '[redacted]'],
          ['x-odd', 'again'],
        ],
        preview: Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x22, 0x7d]),
      });
      await refusals().add([refusal], WIDE);
      const [stored, ...rest] = await refusals().list({ limit: 10 });
      expect(rest).toEqual([]);
      expect(stored).toMatchObject({ ...refusal, preview: expect.any(Buffer) });
      expect(stored?.preview.equals(refusal.preview)).toBe(true);
      expect(Number.isSafeInteger(stored?.seq)).toBe(true);
    });

    it('keeps a refusal whose source name was not valid under source null, apart from every named source', async () => {
      const invalid = newRefusal({ source: null, code: 'invalid_source', status: 400, preview: Buffer.alloc(0), size: 0 });
      const named = newRefusal({ source: 'github' });
      await refusals().add([invalid, named], WIDE);
      const all = await refusals().list({ limit: 10 });
      expect(all.map((r) => r.source)).toEqual(['github', null]);
      expect(all[1]?.preview.length).toBe(0);
      expect(ids(await refusals().list({ limit: 10, source: 'github' }))).toEqual([named.id]);
      expect(await refusals().count(null)).toBe(1);
      expect(await refusals().count('github')).toBe(1);
      expect(await refusals().count()).toBe(2);
    });

    it('lists newest first, by source, a page at a time without a gap or a repeat, with seqs that grow across batches', async () => {
      const first = newRefusals(6, { source: 'a' });
      const mixed = [...newRefusals(5, { source: 'b' }), ...newRefusals(5, { source: 'a' })];
      await refusals().add(first, WIDE);
      await refusals().add(mixed, WIDE);
      const all = await readAll(refusals());
      expect(ids(all)).toEqual(newestFirst([...first, ...mixed]));
      expect(all.every((r, i) => i === 0 || r.seq < (all[i - 1]?.seq ?? 0))).toBe(true);
      expect(ids(await readAll(refusals(), 'a', 4))).toEqual(newestFirst([...first, ...mixed.slice(5)]));
      expect(ids(await readAll(refusals(), 'b', 2))).toEqual(newestFirst(mixed.slice(0, 5)));
      expect(await refusals().list({ limit: 5, source: 'nobody' })).toEqual([]);
    });

    it('keeps refusals apart from the inbox: neither lists nor counts the other', async () => {
      await store().append([newDelivery({ source: 'github' })]);
      await refusals().add([newRefusal({ source: 'github' })], WIDE);
      expect(await store().list({ limit: 10 })).toHaveLength(1);
      expect(await store().sources()).toMatchObject([{ source: 'github', count: 1 }]);
      expect(await refusals().list({ limit: 10 })).toHaveLength(1);
    });

    it('keeps at most perSource of each source, the newest, whatever the batches', async () => {
      const bounds = { perSource: 10, total: 1000 };
      const a: NewRefusal[] = [];
      for (let batch = 0; batch < 4; batch++) {
        const more = newRefusals(7, { source: 'a' });
        a.push(...more);
        await refusals().add([...more, newRefusal({ source: 'b' })], bounds);
      }
      expect(ids(await readAll(refusals(), 'a'))).toEqual(newestFirst(a.slice(-10)));
      expect(await readAll(refusals(), 'b')).toHaveLength(4);
      expect(await refusals().count('a')).toBe(10);
      expect(await refusals().count()).toBe(14);
      // One batch larger than the bound keeps its newest.
      const big = newRefusals(25, { source: null });
      await refusals().add(big, bounds);
      expect(ids((await readAll(refusals())).filter((r) => r.source === null))).toEqual(newestFirst(big.slice(-10)));
      expect(await refusals().count(null)).toBe(10);
      expect(await refusals().count()).toBe(24);
    });

    it('keeps at most total in all, deleting the oldest of any source, with the counts kept right', async () => {
      const bounds = { perSource: 100, total: 8 };
      const written: NewRefusal[] = [];
      for (const source of ['a', 'b', 'c']) {
        const batch = newRefusals(5, { source });
        written.push(...batch);
        await refusals().add(batch, bounds);
      }
      const kept = await readAll(refusals());
      expect(ids(kept)).toEqual(newestFirst(written.slice(-8)));
      expect(await refusals().count()).toBe(8);
      expect(await refusals().count('a')).toBe(0);
      expect(await refusals().count('b')).toBe(3);
      expect(await refusals().count('c')).toBe(5);
      // Many sources of one each (a flood to random names) stay within the total too.
      await refusals().add(
        Array.from({ length: 30 }, (_, i) => newRefusal({ source: `random-${i}` })),
        bounds,
      );
      expect(await readAll(refusals())).toHaveLength(8);
      expect(await refusals().count()).toBe(8);
      expect(await refusals().count('c')).toBe(0);
    });

    it('prunes by age at most limit at a time, and keeps the counts right', async () => {
      const old = [...newRefusals(3, { source: 'a', receivedAt: 1000 }), ...newRefusals(2, { source: null, receivedAt: 2000 })];
      const fresh = newRefusals(2, { source: 'a', receivedAt: 5000 });
      await refusals().add([...old, ...fresh], WIDE);
      expect(await refusals().pruneOlderThan(3000, 4)).toBe(4);
      expect(await refusals().pruneOlderThan(3000, 4)).toBe(1);
      expect(await refusals().pruneOlderThan(3000, 4)).toBe(0);
      expect(ids(await readAll(refusals()))).toEqual(newestFirst(fresh));
      expect(await refusals().count('a')).toBe(2);
      expect(await refusals().count(null)).toBe(0);
      expect(await refusals().count()).toBe(2);
    });

    it('never hands out a seq twice, even once the newest refusals were pruned', async () => {
      await refusals().add(newRefusals(3, { receivedAt: 1000 }), WIDE);
      const before = await refusals().list({ limit: 1 });
      await refusals().pruneOlderThan(2000, 10);
      await refusals().add([newRefusal({ receivedAt: 3000 })], WIDE);
      const [after] = await refusals().list({ limit: 1 });
      expect(after?.seq).toBeGreaterThan(before[0]?.seq ?? Infinity);
    });

    it('adds nothing for an empty batch', async () => {
      await refusals().add([], WIDE);
      expect(await refusals().count()).toBe(0);
    });
  });
}
