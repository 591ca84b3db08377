import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/platform/observe/metrics.js';
import { RetentionPruner } from '../../src/inbox/retention-pruner.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newDelivery } from '../helpers/delivery-factory.js';
import { newRefusal, newRefusals } from '../../src/refusals/contract/refusal-factory.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** RECEPTION_RETENTION: the pruner on a real SQLite file. */
describe('RetentionPruner', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: SqliteStore;
  beforeEach(() => {
    dir = tempDir();
    store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full' });
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it('deletes every delivery past the retention in batches, keeps the rest, and counts and logs what it deleted', async () => {
    const now = Date.now();
    const old = Array.from({ length: 7 }, (_, i) =>
      newDelivery({ source: i % 2 === 0 ? 'a' : 'b', receivedAt: now - 2 * DAY_MS + i }),
    );
    const fresh = [newDelivery({ source: 'a', receivedAt: now - 1000 }), newDelivery({ source: 'c', receivedAt: now })];
    await store.append([...old, ...fresh]);
    const metrics = new Metrics();
    const { logger, lines } = capturingLogger();
    const pruner = new RetentionPruner({ store, retentionMs: DAY_MS, logger, metrics, batchSize: 2 });

    expect(await pruner.pruneOnce()).toBe(7);

    const kept = await store.list({ limit: 100 });
    expect(kept.map((d) => d.id).sort()).toEqual(fresh.map((d) => d.id).sort());
    expect(await store.sources()).toEqual([
      { source: 'a', count: 1, lastReceivedAt: now - 1000 },
      { source: 'c', count: 1, lastReceivedAt: now },
    ]);
    expect((await metrics.pruned.get()).values[0]?.value).toBe(7);
    expect(lines.find((l) => l.msg === 'retention pruned deliveries')).toMatchObject({ deleted: 7 });
    expect(await pruner.pruneOnce()).toBe(0);
    await pruner.stop();
  });

  it('deletes at most batchSize per transaction and gives the event loop a turn between transactions', async () => {
    const now = Date.now();
    await store.append(Array.from({ length: 7 }, (_, i) => newDelivery({ receivedAt: now - 2 * DAY_MS + i })));
    // The real store, with each call to pruneOlderThan noted along with how many event-loop turns had run.
    let turns = 0;
    let counting = true;
    const countTurns = (): void => {
      turns++;
      if (counting) setImmediate(countTurns);
    };
    setImmediate(countTurns);
    const calls: Array<{ limit: number; deleted: number; turn: number }> = [];
    const recording = new Proxy(store, {
      get(target, property) {
        if (property === 'pruneOlderThan') {
          return async (before: number, limit: number) => {
            const turn = turns;
            const deleted = await target.pruneOlderThan(before, limit);
            calls.push({ limit, deleted, turn });
            return deleted;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const pruner = new RetentionPruner({
      store: recording,
      retentionMs: DAY_MS,
      logger: capturingLogger().logger,
      metrics: new Metrics(),
      batchSize: 3,
    });

    expect(await pruner.pruneOnce()).toBe(7);
    counting = false;

    expect(calls.map((c) => [c.limit, c.deleted])).toEqual([
      [3, 3],
      [3, 3],
      [3, 1],
    ]);
    for (let i = 1; i < calls.length; i++) {
      expect(calls[i]?.turn, `event-loop turns before transaction ${i + 1}`).toBeGreaterThan(calls[i - 1]?.turn ?? Infinity);
    }
  });

  it('logs a failure and tries again on the next round instead of throwing', async () => {
    await store.append([newDelivery({ receivedAt: Date.now() - 2 * DAY_MS })]);
    const { logger, lines } = capturingLogger();
    const pruner = new RetentionPruner({ store, retentionMs: DAY_MS, logger, metrics: new Metrics() });
    await store.close();
    expect(await pruner.pruneOnce()).toBe(0);
    expect(lines.find((l) => l.msg === 'retention pruning failed; it will be tried again')).toMatchObject({ level: 40 });
  });

  it('deletes refusals past their own retention (RECEPTION_REFUSALS_RETENTION), and no delivery without RECEPTION_RETENTION', async () => {
    const now = Date.now();
    const oldDelivery = newDelivery({ receivedAt: now - 30 * DAY_MS });
    await store.append([oldDelivery]);
    const old = newRefusals(5, { receivedAt: now - 8 * DAY_MS });
    const fresh = newRefusal({ receivedAt: now - DAY_MS });
    await store.refusals.add([...old, fresh], { perSource: 100, total: 100 });
    const metrics = new Metrics();
    const { logger, lines } = capturingLogger();
    const pruner = new RetentionPruner({ store, refusalRetentionMs: 7 * DAY_MS, logger, metrics, batchSize: 2 });

    expect(await pruner.pruneOnce()).toBe(0);
    expect((await store.refusals.list({ limit: 10 })).map((r) => r.id)).toEqual([fresh.id]);
    expect(await store.refusals.count()).toBe(1);
    expect((await store.get(oldDelivery.id))?.id).toBe(oldDelivery.id);
    expect((await metrics.refusalsPruned.get()).values[0]?.value).toBe(5);
    expect(lines.find((l) => l.msg === 'retention pruned refusals')).toMatchObject({ deleted: 5 });
    await pruner.stop();
  });
});
