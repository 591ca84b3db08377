import { describe, expect, it } from 'vitest';
import type { AppendOutcome, NewDelivery, SourceSummary } from '../../deliveries/delivery-store.js';
import type { InboxDatabase } from '../inbox-database.js';
import { BASE_TIME, newDelivery } from '../../../test/helpers/delivery-factory.js';

/** Appends one delivery per source name, each in its own batch, in the order given. */
async function appendEach(store: InboxDatabase, sources: readonly string[]): Promise<AppendOutcome[]> {
  const outcomes: AppendOutcome[] = [];
  for (const source of sources) {
    const [outcome] = await store.append([newDelivery({ source })]);
    if (outcome === undefined) throw new Error('no outcome');
    outcomes.push(outcome);
  }
  return outcomes;
}

function bySource(summaries: SourceSummary[]): SourceSummary[] {
  return [...summaries].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
}

/** list, readAfter, delete, sources and pruneOlderThan of the store contract. */
export function describeReadingContract(store: () => InboxDatabase): void {
  describe('list', () => {
    it('answers newest first, across sources', async () => {
      const outcomes = await appendEach(store(), ['a', 'b', 'a', 'c']);
      const listed = await store().list({ limit: 10 });
      expect(listed.map((d) => d.id)).toEqual(outcomes.map((o) => o.id).reverse());
    });

    it('answers at most limit deliveries, the newest ones', async () => {
      const outcomes = await appendEach(store(), ['a', 'a', 'a', 'a', 'a']);
      const listed = await store().list({ limit: 2 });
      expect(listed.map((d) => d.seq)).toEqual([outcomes[4]?.seq, outcomes[3]?.seq]);
    });

    it('answers only deliveries with a smaller seq than beforeSeq', async () => {
      const outcomes = await appendEach(store(), ['a', 'a', 'a', 'a']);
      const pivot = outcomes[2]?.seq;
      const listed = await store().list({ limit: 10, beforeSeq: pivot });
      expect(listed.map((d) => d.seq)).toEqual([outcomes[1]?.seq, outcomes[0]?.seq]);
    });

    it('pages through the whole inbox with beforeSeq, each delivery once', async () => {
      const outcomes = await appendEach(store(), ['a', 'b', 'a', 'b', 'a', 'b', 'a']);
      const seen: number[] = [];
      let beforeSeq: number | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await store().list({ limit: 3, ...(beforeSeq === undefined ? {} : { beforeSeq }) });
        if (rows.length === 0) break;
        seen.push(...rows.map((d) => d.seq));
        beforeSeq = rows[rows.length - 1]?.seq;
      }
      expect(seen).toEqual(outcomes.map((o) => o.seq).reverse());
    });

    it('filters by source, case-sensitively, also with beforeSeq', async () => {
      const outcomes = await appendEach(store(), ['github', 'GitHub', 'github', 'stripe', 'github']);
      const github = await store().list({ limit: 10, source: 'github' });
      expect(github.map((d) => d.seq)).toEqual([outcomes[4]?.seq, outcomes[2]?.seq, outcomes[0]?.seq]);
      expect(github.every((d) => d.source === 'github')).toBe(true);
      const upper = await store().list({ limit: 10, source: 'GitHub' });
      expect(upper.map((d) => d.seq)).toEqual([outcomes[1]?.seq]);
      const older = await store().list({ limit: 1, source: 'github', beforeSeq: outcomes[4]?.seq });
      expect(older.map((d) => d.seq)).toEqual([outcomes[2]?.seq]);
      expect(await store().list({ limit: 10, source: 'nobody' })).toEqual([]);
    });

    it('answers an empty list on an empty inbox', async () => {
      expect(await store().list({ limit: 50 })).toEqual([]);
      expect(await store().list({ limit: 50, maxBytes: 10 })).toEqual([]);
    });

    it('stops at maxBytes: the delivery that reaches it is the last, the first always comes, and paging misses none', async () => {
      const sizes = [300, 100, 250, 50, 400, 10];
      const outcomes: AppendOutcome[] = [];
      for (const size of sizes) {
        const [outcome] = await store().append([
          newDelivery({ source: size % 100 === 0 ? 'round' : 'other', raw: Buffer.alloc(size, 0x61) }),
        ]);
        if (outcome !== undefined) outcomes.push(outcome);
      }
      const seqs = outcomes.map((o) => o.seq).reverse(); // newest first: sizes 10, 400, 50, 250, 100, 300
      expect((await store().list({ limit: 10, maxBytes: 400 })).map((d) => d.seq)).toEqual(seqs.slice(0, 2));
      expect((await store().list({ limit: 10, maxBytes: 411 })).map((d) => d.seq)).toEqual(seqs.slice(0, 3));
      // The first delivery comes even when it alone is over the budget, and limit still counts.
      expect((await store().list({ limit: 10, maxBytes: 1, beforeSeq: seqs[0] })).map((d) => d.seq)).toEqual([seqs[1]]);
      expect((await store().list({ limit: 1, maxBytes: 10_000 })).map((d) => d.seq)).toEqual([seqs[0]]);
      // With a source: sizes 400, 100, 300 among the "round" ones.
      const round = await store().list({ limit: 10, maxBytes: 450, source: 'round' });
      expect(round.map((d) => d.raw.length)).toEqual([400, 100]);
      const seen: number[] = [];
      let beforeSeq: number | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await store().list({ limit: 10, maxBytes: 300, ...(beforeSeq === undefined ? {} : { beforeSeq }) });
        if (rows.length === 0) break;
        seen.push(...rows.map((d) => d.seq));
        beforeSeq = rows[rows.length - 1]?.seq;
      }
      expect(seen).toEqual(seqs);
    });
  });

  describe('readAfter', () => {
    it('answers oldest first, only seqs greater than afterSeq, at most limit', async () => {
      const outcomes = await appendEach(store(), ['a', 'b', 'a', 'b', 'a']);
      const all = await store().readAfter(0, 100);
      expect(all.map((d) => d.seq)).toEqual(outcomes.map((o) => o.seq));
      const after = await store().readAfter(outcomes[1]?.seq ?? 0, 2);
      expect(after.map((d) => d.seq)).toEqual([outcomes[2]?.seq, outcomes[3]?.seq]);
      expect(await store().readAfter(outcomes[4]?.seq ?? 0, 10)).toEqual([]);
    });

    it('filters by source', async () => {
      const outcomes = await appendEach(store(), ['a', 'b', 'a', 'b', 'a']);
      const b = await store().readAfter(0, 10, 'b');
      expect(b.map((d) => d.seq)).toEqual([outcomes[1]?.seq, outcomes[3]?.seq]);
      const aAfter = await store().readAfter(outcomes[0]?.seq ?? 0, 10, 'a');
      expect(aAfter.map((d) => d.seq)).toEqual([outcomes[2]?.seq, outcomes[4]?.seq]);
      expect(aAfter.every((d) => d.source === 'a')).toBe(true);
    });

    it('skips deleted deliveries without stopping', async () => {
      const outcomes = await appendEach(store(), ['a', 'a', 'a']);
      await store().delete(outcomes[1]?.id ?? '');
      const rows = await store().readAfter(0, 10);
      expect(rows.map((d) => d.seq)).toEqual([outcomes[0]?.seq, outcomes[2]?.seq]);
    });
  });

  describe('delete', () => {
    it('answers true once, then false, and removes only that delivery', async () => {
      const outcomes = await appendEach(store(), ['a', 'a']);
      const gone = outcomes[0]?.id ?? '';
      expect(await store().delete(gone)).toBe(true);
      expect(await store().get(gone)).toBeUndefined();
      expect(await store().delete(gone)).toBe(false);
      expect((await store().list({ limit: 10 })).map((d) => d.id)).toEqual([outcomes[1]?.id]);
    });

    it('answers false for an id that never existed', async () => {
      await appendEach(store(), ['a']);
      expect(await store().delete('never-existed')).toBe(false);
      expect(await store().list({ limit: 10 })).toHaveLength(1);
    });
  });

  describe('sources', () => {
    it('counts deliveries per source with the latest receivedAt', async () => {
      const early = newDelivery({ source: 'a', receivedAt: BASE_TIME + 10_000 });
      const late = newDelivery({ source: 'a', receivedAt: BASE_TIME + 90_000 });
      // Appended after `late` but received before it: lastReceivedAt stays the latest.
      const straggler = newDelivery({ source: 'a', receivedAt: BASE_TIME + 50_000 });
      const other = newDelivery({ source: 'b', receivedAt: BASE_TIME + 20_000 });
      await store().append([early, late]);
      await store().append([straggler, other]);
      expect(bySource(await store().sources())).toEqual([
        { source: 'a', count: 3, lastReceivedAt: late.receivedAt },
        { source: 'b', count: 1, lastReceivedAt: other.receivedAt },
      ]);
    });

    it('follows deletes, falls back to the next latest, and drops a source at zero', async () => {
      const older = newDelivery({ source: 'a', receivedAt: BASE_TIME + 1000 });
      const newer = newDelivery({ source: 'a', receivedAt: BASE_TIME + 2000 });
      const b = newDelivery({ source: 'b' });
      await store().append([older, newer, b]);
      await store().delete(newer.id);
      expect(bySource(await store().sources())).toEqual([
        { source: 'a', count: 1, lastReceivedAt: older.receivedAt },
        { source: 'b', count: 1, lastReceivedAt: b.receivedAt },
      ]);
      await store().delete(older.id);
      expect(await store().sources()).toEqual([{ source: 'b', count: 1, lastReceivedAt: b.receivedAt }]);
    });

    it('answers an empty list on an empty inbox', async () => {
      expect(await store().sources()).toEqual([]);
    });
  });

  describe('pruneOlderThan', () => {
    const at = (seconds: number, source = 'a'): NewDelivery => newDelivery({ source, receivedAt: BASE_TIME + seconds * 1000 });

    it('deletes only deliveries received strictly before the cutoff', async () => {
      const batch = [at(1), at(2), at(3), at(4)];
      await store().append(batch);
      const deleted = await store().pruneOlderThan(BASE_TIME + 3000, 100);
      expect(deleted).toBe(2);
      const left = await store().list({ limit: 10 });
      expect(left.map((d) => d.receivedAt).sort((x, y) => x - y)).toEqual([BASE_TIME + 3000, BASE_TIME + 4000]);
    });

    it('deletes at most limit deliveries per call, oldest first', async () => {
      const batch = [at(5), at(1), at(4), at(2), at(3), at(100)];
      await store().append(batch);
      const cutoff = BASE_TIME + 50_000;
      expect(await store().pruneOlderThan(cutoff, 2)).toBe(2);
      const afterFirst = (await store().list({ limit: 10 })).map((d) => d.receivedAt).sort((x, y) => x - y);
      expect(afterFirst).toEqual([3, 4, 5, 100].map((s) => BASE_TIME + s * 1000));
      expect(await store().pruneOlderThan(cutoff, 2)).toBe(2);
      expect(await store().pruneOlderThan(cutoff, 2)).toBe(1);
      expect(await store().pruneOlderThan(cutoff, 2)).toBe(0);
      expect((await store().list({ limit: 10 })).map((d) => d.receivedAt)).toEqual([BASE_TIME + 100_000]);
    });

    it('keeps the source counts in step', async () => {
      await store().append([at(1, 'a'), at(2, 'b'), at(3, 'a'), at(60, 'a')]);
      expect(await store().pruneOlderThan(BASE_TIME + 10_000, 100)).toBe(3);
      expect(await store().sources()).toEqual([{ source: 'a', count: 1, lastReceivedAt: BASE_TIME + 60_000 }]);
    });

    it('answers 0 when nothing is old enough', async () => {
      await store().append([at(10)]);
      expect(await store().pruneOlderThan(BASE_TIME, 100)).toBe(0);
      expect(await store().list({ limit: 10 })).toHaveLength(1);
    });
  });
}
