import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observe/metrics.js';
import { RetentionPruner } from '../../src/retention/pruner.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newDelivery } from './delivery-factory.js';

const DAY_MS = 24 * 60 * 60 * 1000;

function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

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
    const old = Array.from({ length: 7 }, (_, i) => newDelivery({ source: i % 2 === 0 ? 'a' : 'b', receivedAt: now - 2 * DAY_MS + i }));
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

  it('logs a failure and tries again on the next round instead of throwing', async () => {
    await store.append([newDelivery({ receivedAt: Date.now() - 2 * DAY_MS })]);
    const { logger, lines } = capturingLogger();
    const pruner = new RetentionPruner({ store, retentionMs: DAY_MS, logger, metrics: new Metrics() });
    await store.close();
    expect(await pruner.pruneOnce()).toBe(0);
    expect(lines.find((l) => l.msg === 'retention pruning failed; it will be tried again')).toMatchObject({ level: 40 });
  });
});
