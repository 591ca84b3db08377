import { afterEach, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import type { ClaimedForward } from '../outbox.js';
import { BUDGET, deliverAll, outcome, T0, type DeliverOptions } from './outbox-contract-support.js';

/** Several stores on one database, each as another instance would have it. */
export interface Instances {
  stores: InboxDatabase[];
  cleanup: () => Promise<void>;
}

const LONG_LEASE = 3_600_000;

/** Yields to the event loop for a moment, as a sender awaiting a response would. */
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What several instances claiming from one outbox at once owe each other
 * (PostgreSQL only: a SQLite file has one writer). `open(n)` opens n stores
 * on one fresh schema, each with its own pool.
 */
export function describeConcurrentClaims(open: (count: number) => Promise<Instances>): void {
  describe('concurrent claimers on one outbox', () => {
    let instances: Instances | undefined;
    afterEach(async () => {
      await instances?.cleanup();
      instances = undefined;
    });

    /** Stores `count` forwards to `app`, in batches of 50, spread over `sources`. */
    const fill = async (store: InboxDatabase, count: number, sources: number): Promise<string[]> => {
      const forwardIds: string[] = [];
      for (let start = 0; start < count; start += 50) {
        const batch: DeliverOptions[] = [];
        for (let i = start; i < Math.min(count, start + 50); i++) batch.push({ source: `s${i % sources}`, at: T0 + i });
        for (const delivered of await deliverAll(store, batch)) forwardIds.push(...delivered.forwards);
      }
      return forwardIds;
    };

    it('hands each of 500 forwards to exactly one of 4 claimers, and all of them in the end', async () => {
      instances = await open(4);
      const [first] = instances.stores;
      if (first === undefined) throw new Error('no store');
      const all = await fill(first, 500, 7);
      const claims = new Map<string, number>();
      const perClaimer: number[] = [];
      await Promise.all(
        instances.stores.map(async (store, claimer) => {
          perClaimer[claimer] = 0;
          for (;;) {
            const claimed = await store.outbox.claim({
              destination: 'app',
              max: 7,
              leaseMs: LONG_LEASE,
              now: T0 + 1000,
              ordered: false,
              budget: BUDGET,
            });
            if (claimed.length === 0) break;
            for (const { forward } of claimed) claims.set(forward.id, (claims.get(forward.id) ?? 0) + 1);
            perClaimer[claimer] = (perClaimer[claimer] ?? 0) + claimed.length;
            await pause(1);
            expect(await store.outbox.settle(claimed.map((c) => outcome(c.forward, T0 + 1000, { state: 'succeeded' })))).toBe(
              claimed.length,
            );
          }
        }),
      );
      expect([...claims.values()].filter((n) => n !== 1)).toEqual([]);
      expect([...claims.keys()].sort()).toEqual([...all].sort());
      expect(perClaimer.filter((n) => n > 0).length).toBeGreaterThan(1);
      expect((await first.outbox.list({ limit: 1000, status: 'succeeded' })).length).toBe(500);
    });

    it('never has two forwards of one source delivering at once with ordered claims, and keeps each source in seq order', async () => {
      instances = await open(4);
      const [first] = instances.stores;
      if (first === undefined) throw new Error('no store');
      const sources = 12;
      await fill(first, 240, sources);
      // A forward is in `delivering` here from its claim's answer to its settle's call: inside
      // the time the database has it delivering, so an overlap here is an overlap there.
      const delivering = new Map<string, string>();
      const overlaps: string[] = [];
      const order = new Map<string, number[]>();
      let mostAtOnce = 0;
      const settleOne = async (store: InboxDatabase, claimed: ClaimedForward): Promise<void> => {
        await pause(Math.floor(Math.random() * 3));
        delivering.delete(claimed.forward.source);
        await store.outbox.settle([outcome(claimed.forward, T0 + 1000, { state: 'succeeded' })]);
      };
      let settled = 0;
      await Promise.all(
        instances.stores.map(async (store) => {
          while (settled < 240) {
            const claimed = await store.outbox.claim({
              destination: 'app',
              max: 5,
              leaseMs: LONG_LEASE,
              now: T0 + 1000,
              ordered: true,
              budget: BUDGET,
            });
            for (const { forward } of claimed) {
              const other = delivering.get(forward.source);
              if (other !== undefined) overlaps.push(`${forward.source}: ${other} and ${forward.id}`);
              delivering.set(forward.source, forward.id);
              order.set(forward.source, [...(order.get(forward.source) ?? []), forward.deliverySeq]);
            }
            mostAtOnce = Math.max(mostAtOnce, delivering.size);
            await Promise.all(claimed.map((c) => settleOne(store, c)));
            settled += claimed.length;
            if (claimed.length === 0) await pause(2);
          }
        }),
      );
      expect(overlaps).toEqual([]);
      expect([...order.values()].flat()).toHaveLength(240);
      for (const seqs of order.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(mostAtOnce).toBeGreaterThan(1);
      expect((await first.outbox.list({ limit: 1000, status: 'succeeded' })).length).toBe(240);
    });

    it('never has two forwards of one source delivering at once while failed ones are retried meanwhile', async () => {
      instances = await open(4);
      const [first] = instances.stores;
      if (first === undefined) throw new Error('no store');
      const total = 160;
      await fill(first, total, 8);
      const delivering = new Map<string, string>();
      const overlaps: string[] = [];
      let succeeded = 0;
      let retried = 0;
      const claimers = instances.stores.map(async (store) => {
        while (succeeded < total) {
          const claimed = await store.outbox.claim({
            destination: 'app',
            max: 5,
            leaseMs: LONG_LEASE,
            now: T0 + 1000,
            ordered: true,
            budget: BUDGET,
          });
          for (const { forward } of claimed) {
            const other = delivering.get(forward.source);
            if (other !== undefined) overlaps.push(`${forward.source}: ${other} and ${forward.id}`);
            delivering.set(forward.source, forward.id);
          }
          await Promise.all(
            claimed.map(async ({ forward }) => {
              await pause(Math.floor(Math.random() * 2));
              delivering.delete(forward.source);
              // Each forward fails at most twice, so that the retries come to an end.
              const fail = forward.attemptCount < 3 && Math.random() < 0.4;
              await store.outbox.settle([outcome(forward, T0 + 1000, fail ? { state: 'failed' } : { state: 'succeeded' })]);
              if (!fail) succeeded++;
            }),
          );
          if (claimed.length === 0) await pause(1);
        }
      });
      const [retrier] = instances.stores.slice(-1);
      const retrying = (async () => {
        while (succeeded < total && retrier !== undefined) {
          retried += await retrier.outbox.retry({ destination: 'app' }, T0 + 500);
          await pause(1);
        }
      })();
      await Promise.all([...claimers, retrying]);
      expect(overlaps).toEqual([]);
      expect(retried).toBeGreaterThan(0);
      expect((await first.outbox.list({ limit: 1000, status: 'succeeded' })).length).toBe(total);
    });
  });
}
