import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FALLBACK_CHECKPOINT_PAGES } from '../../src/platform/db/sqlite/checkpointer.js';
import { Database } from '../../src/platform/db/sqlite/driver.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { newDeliveries } from '../helpers/delivery-factory.js';
import { tempDir } from '../helpers/temp-dir.js';

// In the serial suite: whether the thread restarts the WAL within the stream depends on how fast it
// copies, which other test files on the same two cores slowed past the stream's end (issue 22's thread;
// the rest of its tests are in test/store/sqlite-checkpointer.test.ts).
const PAGE = 4096;
const walBytes = (file: string): number => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQLite checkpoints on their own thread, under a stream of appends', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'reception.sqlite');
  });
  afterEach(() => dir.remove());

  it('keeps the WAL bounded under a steady stream of appends, restarting it, and loses nothing', async () => {
    const store = new SqliteStore({ file, durability: 'full', checkpointThread: true });
    const body = Buffer.from(JSON.stringify({ pad: 'x'.repeat(20_000) }));
    let appended = 0;
    let largestWal = 0;
    // 48 MiB in batches of 10, about 20 MiB a second: the WAL would reach the committing
    // connection's 32 MiB fallback if the thread did not keep up.
    for (let batch = 0; batch < 240; batch++) {
      const outcomes = await store.append(newDeliveries(10, { raw: body }));
      appended += outcomes.length;
      largestWal = Math.max(largestWal, walBytes(file));
      await sleep(8);
    }
    // A restart waits for a copy that ends short (few frames came in while it copied); on a
    // loaded machine with a slow disk no copy of that window may, so the stream goes on, a
    // little slower, until one does (a CI run saw none in the first 240 batches).
    const started = Date.now();
    while (
      ((store.checkpoints()?.restarts ?? 0) === 0 || (store.checkpoints()?.catchUps ?? 0) === 0) &&
      Date.now() - started < 20_000
    ) {
      const outcomes = await store.append(newDeliveries(10, { raw: body }));
      appended += outcomes.length;
      largestWal = Math.max(largestWal, walBytes(file));
      await sleep(25);
    }
    const totals = store.checkpoints();
    expect(totals?.checkpoints).toBeGreaterThan(5);
    expect(totals?.restarts).toBeGreaterThan(0);
    expect(totals?.catchUps).toBeGreaterThan(0);
    // The thread started the WAL over before the committing connection's own checkpoint
    // (FALLBACK_CHECKPOINT_PAGES) had to: how far past RESTART_PAGES it grows depends on how
    // fast the thread copies, which a loaded machine slows (19.6 MB seen in CI).
    expect(largestWal).toBeLessThan(FALLBACK_CHECKPOINT_PAGES * (PAGE + 24));
    expect((await store.sources()).find((s) => s.source === 'github')?.count).toBe(appended);
    await store.close();
    // The last connection to close checkpoints what is left and removes the WAL.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT count(*) AS n FROM deliveries').get()).toEqual({ n: appended });
    } finally {
      db.close();
    }
  });
});
