import { describe, expect, it } from 'vitest';
import { type TrafficBucket, type TrafficCounts } from '../traffic.js';
import { HOUR_MS, MINUTE_MS } from '../../platform/config/duration.js';
import { newDelivery } from '../../../test/helpers/delivery-factory.js';
import { freshStoreEachTest, type OpenStore } from '../../../test/helpers/store-fixtures.js';
import { claim, claimedOne, deliver, outcome, T0 } from '../../forwarding/outbox/contract/outbox-contract-support.js';

/** A time on a whole hour, so that the tests' minutes and hours fall where they say. */
const HOUR = Date.UTC(2026, 2, 3, 10, 0, 0);
const ZERO: TrafficCounts = { delivered: 0, refused: 0, forwarded: 0, forwardFailed: 0, dead: 0 };

/** The buckets as `{ start offset in minutes: counts that are not 0 }`, for short expectations. */
function shape(buckets: readonly TrafficBucket[], from: number): Record<string, Partial<TrafficCounts> & { source: string }> {
  const out: Record<string, Partial<TrafficCounts> & { source: string }> = {};
  for (const b of buckets) {
    const counts: Partial<TrafficCounts> & { source: string } = { source: b.source };
    for (const kind of Object.keys(ZERO) as Array<keyof TrafficCounts>) if (b[kind] !== 0) counts[kind] = b[kind];
    out[`${b.source}@${(b.start - from) / MINUTE_MS}`] = counts;
  }
  return out;
}

/**
 * What every backend's traffic counts owe the page (README, "A picture of
 * the traffic"): deliveries, refusals and forward outcomes counted per
 * source and minute where they are written, read back per minute or hour.
 */
export function describeTrafficStore(name: string, open: OpenStore): void {
  describe(`TrafficStore contract: ${name}`, () => {
    const store = freshStoreEachTest(open);

    it('counts stored deliveries per source and minute, duplicates not, and deletes take nothing back', async () => {
      const s = store();
      await s.append([
        newDelivery({ source: 'a', receivedAt: HOUR + 5_000 }),
        newDelivery({ source: 'a', receivedAt: HOUR + 59_999 }),
        newDelivery({ source: 'a', receivedAt: HOUR + 60_000, dedupKey: 'k1' }),
        newDelivery({ source: 'b', receivedAt: HOUR + 3 * MINUTE_MS }),
      ]);
      const [repeat] = await s.append([newDelivery({ source: 'a', receivedAt: HOUR + 61_000, dedupKey: 'k1' })]);
      expect(repeat?.duplicate).toBe(true);
      const [again] = await s.append([newDelivery({ source: 'a', receivedAt: HOUR + 62_000 })]);
      expect(await s.delete(again?.id ?? '')).toBe(true);
      const buckets = await s.traffic.read({ sources: ['a', 'b'], from: HOUR, to: HOUR + HOUR_MS, bucketMs: MINUTE_MS });
      expect(shape(buckets, HOUR)).toEqual({
        'a@0': { source: 'a', delivered: 2 },
        'a@1': { source: 'a', delivered: 2 },
        'b@3': { source: 'b', delivered: 1 },
      });
    });

    it('sums minutes into hours, and reads only the sources and the range asked for', async () => {
      const s = store();
      await s.append([
        newDelivery({ source: 'a', receivedAt: HOUR - 1 }),
        newDelivery({ source: 'a', receivedAt: HOUR + 1 }),
        newDelivery({ source: 'a', receivedAt: HOUR + 30 * MINUTE_MS }),
        newDelivery({ source: 'a', receivedAt: HOUR + HOUR_MS + 1 }),
        newDelivery({ source: 'c', receivedAt: HOUR + 1 }),
      ]);
      await s.traffic.addRefused([
        { source: 'a', at: HOUR + 10 * MINUTE_MS, refused: 2 },
        { source: 'a', at: HOUR + 10 * MINUTE_MS + 30_000, refused: 1 },
      ]);
      const hours = await s.traffic.read({ sources: ['a'], from: HOUR, to: HOUR + 2 * HOUR_MS, bucketMs: HOUR_MS });
      expect(shape(hours, HOUR)).toEqual({
        'a@0': { source: 'a', delivered: 2, refused: 3 },
        'a@60': { source: 'a', delivered: 1 },
      });
      expect(await s.traffic.read({ sources: ['nobody'], from: HOUR, to: HOUR + HOUR_MS, bucketMs: HOUR_MS })).toEqual([]);
      expect(await s.traffic.read({ sources: [], from: HOUR, to: HOUR + HOUR_MS, bucketMs: HOUR_MS })).toEqual([]);
    });

    it('counts refusals added in several calls, and a source name with any characters', async () => {
      const s = store();
      const odd = 'ü \u{1f600} \'"; DROP';
      await s.traffic.addRefused([{ source: odd, at: HOUR, refused: 4 }]);
      await s.traffic.addRefused([{ source: odd, at: HOUR + 1, refused: 1 }]);
      const buckets = await s.traffic.read({ sources: [odd], from: HOUR, to: HOUR + MINUTE_MS, bucketMs: MINUTE_MS });
      expect(shape(buckets, HOUR)).toEqual({ [`${odd}@0`]: { source: odd, refused: 5 } });
    });

    it('counts forward outcomes where they are recorded: success, a failed attempt, a dead letter, an expired lease, an ack', async () => {
      const s = store();
      const source = 'fwd';
      await deliver(s, { source, at: T0 });
      await deliver(s, { source, at: T0 });
      await deliver(s, { source, at: T0 });
      await deliver(s, { source, at: T0 });
      const claimed = await claim(s, T0, { max: 4 });
      expect(claimed).toHaveLength(4);
      const [one, two, three, four] = claimed.map((c) => c.forward);
      if (one === undefined || two === undefined || three === undefined || four === undefined) throw new Error('4 claimed');
      // At T0 + 1 min: a success, a failed attempt to be retried, and a dead letter.
      await s.outbox.settle([
        outcome(one, T0 + MINUTE_MS, { state: 'succeeded' }),
        outcome(two, T0 + MINUTE_MS, { state: 'pending', at: T0 + 2 * MINUTE_MS }),
        outcome(three, T0 + MINUTE_MS, { state: 'failed' }),
      ]);
      // The fourth is released unattempted (due again at T0 + 3 min): nothing counted.
      await s.outbox.release([{ id: four.id, n: four.attemptCount }], T0 + 3 * MINUTE_MS);
      // At T0 + 2 min, the retry is claimed and its lease runs out: a failed attempt when it is next claimed.
      const retried = await claim(s, T0 + 2 * MINUTE_MS, { max: 1, leaseMs: 1000 });
      expect(claimedOne(retried).id).toBe(two.id);
      await claim(s, T0 + 2 * MINUTE_MS + 5_000, { max: 0 });
      // A pull consumer's ack of the released one, at T0 + 3 min.
      const pulled = await claim(s, T0 + 3 * MINUTE_MS, { max: 5 });
      const pulledFour = claimedOne(pulled, four.id);
      expect(await s.outbox.ack(four.id, pulledFour.lease ?? '', T0 + 3 * MINUTE_MS + 10)).toBe('ok');
      const from = T0 - (T0 % MINUTE_MS);
      const buckets = await s.traffic.read({ sources: [source], from, to: from + HOUR_MS, bucketMs: MINUTE_MS });
      expect(shape(buckets, from)).toEqual({
        'fwd@0': { source, delivered: 4 },
        'fwd@1': { source, forwarded: 1, forwardFailed: 2, dead: 1 },
        'fwd@2': { source, forwardFailed: 1 },
        'fwd@3': { source, forwarded: 1 },
      });
    });

    it('prunes minutes that started before a time, a batch at a time', async () => {
      const s = store();
      await s.append([
        newDelivery({ source: 'a', receivedAt: HOUR }),
        newDelivery({ source: 'b', receivedAt: HOUR + MINUTE_MS }),
        newDelivery({ source: 'a', receivedAt: HOUR + 2 * MINUTE_MS }),
      ]);
      expect(await s.traffic.pruneOlderThan(HOUR + 2 * MINUTE_MS, 1)).toBe(1);
      expect(await s.traffic.pruneOlderThan(HOUR + 2 * MINUTE_MS, 10)).toBe(1);
      expect(await s.traffic.pruneOlderThan(HOUR + 2 * MINUTE_MS, 10)).toBe(0);
      const buckets = await s.traffic.read({ sources: ['a', 'b'], from: HOUR, to: HOUR + HOUR_MS, bucketMs: MINUTE_MS });
      expect(shape(buckets, HOUR)).toEqual({ 'a@2': { source: 'a', delivered: 1 } });
    });
  });
}
