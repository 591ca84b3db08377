import { join } from 'node:path';
import { Database } from '../../src/platform/db/sqlite/driver.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AppendOutcome } from '../../src/deliveries/delivery-store.js';
import { BatchRefusedError, StoreUnavailableError } from '../../src/platform/db/store-errors.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { WriteQueue, type WriteQueueOptions } from '../../src/inbox/write-queue.js';
import { holdCommits } from '../helpers/held-commits.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newDeliveries, newDelivery } from '../helpers/delivery-factory.js';

interface Commit {
  size: number;
  ok: boolean;
}

describe('WriteQueue on a real SqliteStore', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: SqliteStore;
  /** An independent connection on the same file: what it sees is on disk. */
  let reader: Database;
  let commits: Commit[];

  const queueWith = (options: Partial<WriteQueueOptions> = {}): WriteQueue =>
    new WriteQueue(store, {
      maxPending: 10_000,
      maxPendingBytes: 64 * 1024 * 1024,
      maxBatch: 512,
      maxBatchBytes: 16 * 1024 * 1024,
      onCommit: (size, seconds, ok) => {
        expect(seconds).toBeGreaterThanOrEqual(0);
        commits.push({ size, ok });
      },
      ...options,
    });
  const rowCount = (): number => reader.prepare<[], { n: number }>('SELECT count(*) AS n FROM deliveries').get()?.n ?? -1;
  const isOnDisk = (id: string): boolean => reader.prepare('SELECT 1 FROM deliveries WHERE id = ?').get(id) !== undefined;

  beforeEach(() => {
    dir = tempDir();
    const file = join(dir.path, 'reception.sqlite');
    store = new SqliteStore({ file, durability: 'full', busyTimeoutMs: 50 });
    reader = new Database(file, { readonly: true });
    commits = [];
  });
  afterEach(async () => {
    reader.close();
    await store.close();
    dir.remove();
  });

  describe('group commit', () => {
    it('commits deliveries enqueued in the same tick in one transaction', async () => {
      const queue = queueWith();
      const outcomes = await Promise.all(newDeliveries(200).map((d) => queue.enqueue(d)));
      expect(commits).toEqual([{ size: 200, ok: true }]);
      expect(outcomes).toHaveLength(200);
      expect(rowCount()).toBe(200);
    });

    it('splits a burst into transactions of at most maxBatch', async () => {
      const queue = queueWith({ maxBatch: 64 });
      await Promise.all(newDeliveries(200).map((d) => queue.enqueue(d)));
      expect(commits.map((c) => c.size)).toEqual([64, 64, 64, 8]);
      expect(rowCount()).toBe(200);
    });

    it('stops a transaction at maxBatchBytes of body, and still takes one delivery that is larger alone', async () => {
      const queue = queueWith({ maxBatchBytes: 1000 });
      const sized = (bytes: number): ReturnType<typeof newDelivery> => newDelivery({ raw: Buffer.alloc(bytes, 0x61) });
      const burst = [sized(400), sized(400), sized(200), sized(1), sized(2500), sized(999), sized(2), sized(1000)];
      const outcomes = await Promise.all(burst.map((d) => queue.enqueue(d)));
      // 400+400+200 = 1000 fits; +1 would not. 1 alone, as 1+2500 would not fit; 2500 alone; 999 (+2 would not fit); 2; 1000.
      expect(commits.map((c) => c.size)).toEqual([3, 1, 1, 1, 1, 1]);
      expect(outcomes.map((o) => o.id)).toEqual(burst.map((d) => d.id));
      expect(rowCount()).toBe(8);
    });

    it('bounds a transaction by maxBatch and maxBatchBytes, whichever comes first', async () => {
      const queue = queueWith({ maxBatch: 4, maxBatchBytes: 250 });
      await Promise.all(newDeliveries(10).map((d) => queue.enqueue({ ...d, raw: Buffer.alloc(100, 0x61) })));
      await Promise.all(newDeliveries(9).map((d) => queue.enqueue({ ...d, raw: Buffer.alloc(10, 0x61) })));
      expect(commits.map((c) => c.size)).toEqual([2, 2, 2, 2, 2, 4, 4, 1]);
    });

    it('resolves each promise only after its row is on disk, with its own outcome', async () => {
      const queue = queueWith({ maxBatch: 16 });
      const batch = newDeliveries(100);
      const seenOnResolve: boolean[] = [];
      const outcomes = await Promise.all(
        batch.map((d) =>
          queue.enqueue(d).then((outcome) => {
            seenOnResolve.push(isOnDisk(d.id));
            return outcome;
          }),
        ),
      );
      expect(seenOnResolve).toHaveLength(100);
      expect(seenOnResolve.every(Boolean)).toBe(true);
      expect(outcomes.map((o) => o.id)).toEqual(batch.map((d) => d.id));
      for (const outcome of outcomes) {
        const row = reader.prepare('SELECT seq FROM deliveries WHERE id = ?').get(outcome.id);
        expect(row).toEqual({ seq: outcome.seq });
      }
    });

    it('does not commit before the tick in which deliveries were enqueued ends', async () => {
      const queue = queueWith();
      const delivery = newDelivery();
      const done = queue.enqueue(delivery);
      expect(isOnDisk(delivery.id)).toBe(false);
      expect(queue.depth).toBe(1);
      await done;
      expect(isOnDisk(delivery.id)).toBe(true);
      expect(queue.depth).toBe(0);
    });

    it('counts the deliveries inside a running commit as waiting, until it ends', async () => {
      const { store: slowStore, release } = holdCommits(store);
      const queue = new WriteQueue(slowStore, {
        maxPending: 100,
        maxPendingBytes: 1 << 20,
        maxBatch: 512,
        maxBatchBytes: 1 << 20,
      });
      const done = Promise.all(newDeliveries(3).map((d) => queue.enqueue(d)));
      await new Promise((resolve) => setImmediate(resolve));
      expect(queue.depth).toBe(3);
      release();
      await done;
      expect(queue.depth).toBe(0);
    });

    it('answers a duplicate with the outcome of the first delivery', async () => {
      const queue = queueWith();
      const first = newDelivery({ dedupKey: 'evt' });
      const [a, b] = await Promise.all([queue.enqueue(first), queue.enqueue(newDelivery({ dedupKey: 'evt' }))]);
      expect(a?.duplicate).toBe(false);
      expect(b).toEqual({ ...a, duplicate: true });
      expect(rowCount()).toBe(1);
    });
  });

  describe('a full queue', () => {
    it('refuses past maxPending at once with StoreUnavailableError', async () => {
      const queue = queueWith({ maxPending: 3 });
      const accepted = newDeliveries(3).map((d) => queue.enqueue(d));
      const refusedDelivery = newDelivery();
      const refused = queue.enqueue(refusedDelivery);
      // Refused before any commit happened.
      let settledEarly: unknown;
      refused.catch((error: unknown) => {
        settledEarly = error;
      });
      await Promise.resolve();
      expect(settledEarly).toBeInstanceOf(StoreUnavailableError);
      expect(commits).toEqual([]);
      await Promise.all(accepted);
      expect(commits).toEqual([{ size: 3, ok: true }]);
      expect(isOnDisk(refusedDelivery.id)).toBe(false);
      expect(rowCount()).toBe(3);
    });

    it('takes deliveries again once the pending ones are committed', async () => {
      const queue = queueWith({ maxPending: 2 });
      await Promise.all(newDeliveries(2).map((d) => queue.enqueue(d)));
      await expect(Promise.all(newDeliveries(2).map((d) => queue.enqueue(d)))).resolves.toHaveLength(2);
      expect(rowCount()).toBe(4);
    });

    it('refuses past maxPendingBytes of body, counting each body', async () => {
      const queue = queueWith({ maxPendingBytes: 100 });
      const sixty = (): Buffer => Buffer.alloc(60, 0x61);
      const first = queue.enqueue(newDelivery({ raw: sixty() }));
      const tooMuch = queue.enqueue(newDelivery({ raw: sixty() }));
      const fits = queue.enqueue(newDelivery({ raw: Buffer.alloc(40, 0x62) }));
      await expect(tooMuch).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(Promise.all([first, fits])).resolves.toHaveLength(2);
      expect(commits).toEqual([{ size: 2, ok: true }]);
      // The bytes are given back after the commit.
      await expect(queue.enqueue(newDelivery({ raw: Buffer.alloc(100, 0x63) }))).resolves.toMatchObject({ duplicate: false });
    });
  });

  describe('a failing commit', () => {
    it('rejects only the delivery that the store refuses, and stores its batch-mates, splitting the batch in halves', async () => {
      const queue = queueWith();
      const a = newDelivery();
      const b = newDelivery();
      const clash = newDelivery({ id: a.id });
      const c = newDelivery();
      const results = await Promise.allSettled([a, b, clash, c].map((d) => queue.enqueue(d)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      const refused = results[2];
      expect(refused?.status === 'rejected' && refused.reason).toBeInstanceOf(BatchRefusedError);
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.id : undefined))).toEqual([a.id, b.id, undefined, c.id]);
      expect(commits).toEqual([
        { size: 4, ok: false },
        { size: 2, ok: true },
        { size: 2, ok: false },
        { size: 1, ok: false },
        { size: 1, ok: true },
      ]);
      expect([a, b, c].every((d) => isOnDisk(d.id))).toBe(true);
      expect(rowCount()).toBe(3);
    });

    it('finds one refused delivery among 512 in about 2·log2(512) more commits, keeping the order of the rest', async () => {
      const queue = queueWith();
      const batch = newDeliveries(512);
      const guilty = 300;
      batch[guilty] = newDelivery({ id: batch[guilty - 1]?.id ?? '' });
      const results = await Promise.allSettled(batch.map((d) => queue.enqueue(d)));
      expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
      expect(results[guilty]?.status).toBe('rejected');
      expect(commits.length).toBeLessThanOrEqual(1 + 2 * 9);
      expect(rowCount()).toBe(511);
      const seqs = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.seq] : []));
      expect(seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] ?? Infinity))).toBe(true);
    });

    it('lets the next batch of the same burst commit', async () => {
      const queue = queueWith({ maxBatch: 2 });
      const a = newDelivery();
      const burst = [a, newDelivery({ id: a.id }), newDelivery(), newDelivery()];
      const results = await Promise.allSettled(burst.map((d) => queue.enqueue(d)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect(commits).toEqual([
        { size: 2, ok: false },
        { size: 1, ok: true },
        { size: 1, ok: false },
        { size: 2, ok: true },
      ]);
      expect(isOnDisk(a.id)).toBe(true);
      expect(rowCount()).toBe(3);
    });

    it('fails the whole batch once, without trying its parts, when the store is unavailable', async () => {
      const queue = queueWith();
      const locker = new Database(join(dir.path, 'reception.sqlite'));
      try {
        locker.exec('BEGIN EXCLUSIVE');
        const a = newDelivery();
        const results = await Promise.allSettled([a, newDelivery({ id: a.id }), newDelivery()].map((d) => queue.enqueue(d)));
        for (const result of results) expect(result.status === 'rejected' && result.reason).toBeInstanceOf(StoreUnavailableError);
        expect(commits).toEqual([{ size: 3, ok: false }]);
      } finally {
        locker.close();
      }
    });

    it('stops splitting when the store becomes unavailable halfway, and fails the parts not tried yet with it', async () => {
      const locker = new Database(join(dir.path, 'reception.sqlite'));
      let calls = 0;
      const locking = Object.create(store) as SqliteStore;
      locking.append = async (batch) => {
        calls++;
        // From the second commit on, another connection holds the write lock.
        if (calls === 2) locker.exec('BEGIN EXCLUSIVE');
        return store.append(batch);
      };
      const queue = new WriteQueue(locking, {
        maxPending: 100,
        maxPendingBytes: 1 << 20,
        maxBatch: 512,
        maxBatchBytes: 1 << 20,
        onCommit: (size, _s, ok) => commits.push({ size, ok }),
      });
      try {
        const a = newDelivery();
        const results = await Promise.allSettled(
          [a, newDelivery({ id: a.id }), newDelivery(), newDelivery()].map((d) => queue.enqueue(d)),
        );
        expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
        for (const result of results) expect(result.status === 'rejected' && result.reason).toBeInstanceOf(StoreUnavailableError);
        expect(commits).toEqual([
          { size: 4, ok: false },
          { size: 2, ok: false },
        ]);
      } finally {
        locker.close();
      }
      expect(rowCount()).toBe(0);
    });

    it('rejects while another connection holds the write lock, and works once it is released', async () => {
      const queue = queueWith();
      const locker = new Database(join(dir.path, 'reception.sqlite'));
      try {
        locker.exec('BEGIN EXCLUSIVE');
        locker.prepare('DELETE FROM deliveries').run();
        const locked = await Promise.allSettled(newDeliveries(3).map((d) => queue.enqueue(d)));
        expect(locked.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
        for (const result of locked) {
          if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(StoreUnavailableError);
        }
        locker.exec('ROLLBACK');
        const later = newDelivery();
        await expect(queue.enqueue(later)).resolves.toMatchObject({ id: later.id, duplicate: false });
        expect(commits).toEqual([
          { size: 3, ok: false },
          { size: 1, ok: true },
        ]);
        expect(rowCount()).toBe(1);
      } finally {
        locker.close();
      }
    });
  });

  describe('a failing onCommit listener', () => {
    it('never turns a committed delivery into a failure', async () => {
      const queue = new WriteQueue(store, {
        maxPending: 100,
        maxPendingBytes: 1024 * 1024,
        maxBatch: 10,
        maxBatchBytes: 1 << 20,
        onCommit: () => {
          throw new Error('listener bug');
        },
      });
      const batch = newDeliveries(3);
      const results = await Promise.allSettled(batch.map((d) => queue.enqueue(d)));
      expect(batch.every((d) => isOnDisk(d.id))).toBe(true);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      await expect(queue.drain()).resolves.toBeUndefined();
      await expect(queue.enqueue(newDelivery())).resolves.toMatchObject({ duplicate: false });
    });
  });

  describe('drain', () => {
    it('resolves at once on an idle queue', async () => {
      await expect(queueWith().drain()).resolves.toBeUndefined();
    });

    it('waits until every enqueued delivery has been committed', async () => {
      const queue = queueWith({ maxBatch: 10 });
      const settled: AppendOutcome[] = [];
      for (const delivery of newDeliveries(95)) void queue.enqueue(delivery).then((o) => settled.push(o));
      await queue.drain();
      expect(commits).toHaveLength(10);
      expect(rowCount()).toBe(95);
      expect(settled).toHaveLength(95);
      expect(queue.depth).toBe(0);
    });

    it('resolves when the last batch failed', async () => {
      const queue = queueWith();
      const locker = new Database(join(dir.path, 'reception.sqlite'));
      try {
        locker.exec('BEGIN EXCLUSIVE');
        const failures = newDeliveries(2).map((d) => queue.enqueue(d).catch((e: unknown) => e));
        await queue.drain();
        expect(commits).toEqual([{ size: 2, ok: false }]);
        for (const failure of await Promise.all(failures)) expect(failure).toBeInstanceOf(StoreUnavailableError);
      } finally {
        locker.close();
      }
    });

    it('resolves once a batch split around a refused delivery is settled', async () => {
      const queue = queueWith();
      const a = newDelivery();
      const settled = [a, newDelivery({ id: a.id })].map((d) =>
        queue.enqueue(d).then(
          () => 'stored',
          () => 'refused',
        ),
      );
      await queue.drain();
      expect(queue.depth).toBe(0);
      expect(await Promise.all(settled)).toEqual(['stored', 'refused']);
    });
  });
});
