import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatchRefusedError, StoreUnavailableError } from '../../src/platform/db/store-errors.js';
import { RefusalWriter, type DropReason, type RefusalWriterOptions } from '../../src/refusals/refusal-writer.js';
import type { NewRefusal, RefusalBounds, RefusalStore } from '../../src/refusals/refusals.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newRefusal, newRefusals } from '../../src/refusals/contract/refusal-factory.js';

const BOUNDS: RefusalBounds = { perSource: 1000, total: 1000 };

/** The real SQLite refusals, with each add noted, and a way to make the next ones fail. */
class Recording implements RefusalStore {
  readonly batches: number[] = [];
  inFlight = 0;
  mostInFlight = 0;
  failWith: Error | undefined;

  constructor(private readonly real: RefusalStore) {}

  async add(batch: readonly NewRefusal[], bounds: RefusalBounds): Promise<void> {
    this.inFlight++;
    this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
    try {
      // A turn of the event loop inside the write, as a PostgreSQL round trip would take.
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (this.failWith !== undefined) throw this.failWith;
      await this.real.add(batch, bounds);
      this.batches.push(batch.length);
    } finally {
      this.inFlight--;
    }
  }

  list = (...args: Parameters<RefusalStore['list']>) => this.real.list(...args);
  count = (...args: Parameters<RefusalStore['count']>) => this.real.count(...args);
  pruneOlderThan = (...args: Parameters<RefusalStore['pruneOlderThan']>) => this.real.pruneOlderThan(...args);
}

describe('RefusalWriter on a real SQLite file', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: SqliteStore;
  let recording: Recording;
  let writer: RefusalWriter | undefined;
  let dropped: Array<[number, DropReason]>;

  const start = (options: Partial<RefusalWriterOptions> = {}): RefusalWriter => {
    writer = new RefusalWriter({
      store: recording,
      bounds: BOUNDS,
      log: capturingLogger().logger,
      intervalMs: 5,
      onDropped: (count, reason) => dropped.push([count, reason]),
      ...options,
    });
    return writer;
  };
  const stored = async (): Promise<string[]> => (await store.refusals.list({ limit: 1000 })).map((r) => r.id).reverse();

  beforeEach(() => {
    dir = tempDir();
    store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full' });
    recording = new Recording(store.refusals);
    dropped = [];
  });
  afterEach(async () => {
    await writer?.stop();
    await store.close();
    dir.remove();
  });

  it('writes in order, at most maxBatch a transaction, one transaction at a time, even when flushed meanwhile', async () => {
    const w = start({ maxBatch: 7 });
    const all = newRefusals(50);
    for (const refusal of all.slice(0, 25)) w.record(refusal);
    const flushing = w.flush();
    for (const refusal of all.slice(25)) w.record(refusal);
    await flushing;
    await w.flush();
    expect(await stored()).toEqual(all.map((r) => r.id));
    expect(Math.max(...recording.batches)).toBeLessThanOrEqual(7);
    expect(recording.mostInFlight).toBe(1);
    expect(dropped).toEqual([]);
  });

  it('keeps a transaction within maxBatchBytes, save that one refusal always goes', async () => {
    const w = start({ maxBatchBytes: 10_000 });
    const big = newRefusals(6, { preview: Buffer.alloc(4096, 0x61) });
    for (const refusal of big) w.record(refusal);
    await w.flush();
    expect(recording.batches).toEqual([2, 2, 2]);
  });

  it('drops a batch the store refuses for what it holds, counted, and goes on with the next', async () => {
    const w = start({ maxBatch: 3 });
    recording.failWith = new BatchRefusedError('a value it cannot hold');
    for (const refusal of newRefusals(3)) w.record(refusal);
    await w.flush();
    recording.failWith = undefined;
    const next = newRefusal();
    w.record(next);
    await w.flush();
    expect(await stored()).toEqual([next.id]);
    expect(dropped).toEqual([[3, 'refused']]);
  });

  it('keeps a batch the store could not take, and tries it again after retryMs', async () => {
    const w = start({ maxBatch: 10, retryMs: 30 });
    recording.failWith = new StoreUnavailableError('down');
    const held = newRefusals(4);
    for (const refusal of held) w.record(refusal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(w.buffered).toBe(4);
    recording.failWith = undefined;
    const deadline = Date.now() + 2000;
    while (w.buffered > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await stored()).toEqual(held.map((r) => r.id));
    expect(dropped).toEqual([]);
  });

  it('bounds what it holds in bytes too, and counts what does not fit', async () => {
    const w = start({ maxBufferedBytes: 3 * (4096 + 1000) });
    recording.failWith = new StoreUnavailableError('down');
    for (const refusal of newRefusals(5, { preview: Buffer.alloc(4096, 0x61) })) w.record(refusal);
    expect(w.buffered).toBe(3);
    expect(dropped).toEqual([
      [1, 'buffer_full'],
      [1, 'buffer_full'],
    ]);
  });

  it('on stop, writes what it holds, drops (counted) what the store would not take, and takes no more', async () => {
    const w = start({ intervalMs: 60_000 });
    const first = newRefusals(2);
    for (const refusal of first) w.record(refusal);
    await w.stop();
    expect(await stored()).toEqual(first.map((r) => r.id));
    w.record(newRefusal());
    expect(dropped).toEqual([[1, 'shutdown']]);

    const again = start({ intervalMs: 60_000 });
    recording.failWith = new StoreUnavailableError('down');
    for (const refusal of newRefusals(3)) again.record(refusal);
    await again.stop();
    expect(dropped).toEqual([
      [1, 'shutdown'],
      [3, 'shutdown'],
    ]);
  });
});
