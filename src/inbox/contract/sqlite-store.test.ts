import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Database } from '../../platform/db/sqlite/driver.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../platform/db/store-errors.js';
import { loadMigrations } from '../../platform/db/migrations.js';
import { migrate, SQLITE_MIGRATIONS } from '../../platform/db/sqlite/migrate.js';
import type { Durability } from '../../platform/db/store-errors.js';
import { openDatabase, permissionWarning, WAL_CHECKPOINT_PAGES } from '../../platform/db/sqlite/open-database.js';
import { SqliteStore } from '../sqlite-store.js';
import { tempDir } from '../../../test/helpers/temp-dir.js';
import { newDeliveries, newDelivery } from '../../../test/helpers/delivery-factory.js';
import { describeInboxStore } from './inbox-store-contract.js';
import { openStoresAtOnce } from '../../../test/helpers/stores-in-workers.js';

describeInboxStore('SqliteStore', async () => {
  const dir = tempDir();
  const store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full' });
  return {
    store,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});

describe('SqliteStore on a real file', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  const opened: Array<{ close: () => unknown }> = [];
  const open = (durability: Durability = 'full', busyTimeoutMs?: number): SqliteStore => {
    const store = new SqliteStore({ file, durability, ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }) });
    opened.push(store);
    return store;
  };
  /** A second, independent connection on the same file, as another process would have. */
  const otherConnection = (): Database => {
    const db = new Database(file);
    opened.push(db);
    return db;
  };

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'nested', 'reception.sqlite');
  });
  afterEach(async () => {
    for (const handle of opened.splice(0).reverse()) await handle.close();
    dir.remove();
  });

  describe('pragmas', () => {
    it('syncs every commit (synchronous=FULL) with durability full', () => {
      expect(open('full').db.pragma('synchronous', { simple: true })).toBe(2);
    });

    it('indexes for search without waiting for the disk, and gives deliveries back their FULL', async () => {
      const store = open('full');
      await store.append([newDelivery()]);
      const levels: number[] = [];
      // `derive` runs inside the step (for deliveries stored before types were kept): the step's own level.
      store.db.prepare('UPDATE deliveries SET event_type = NULL').run();
      store.db
        .prepare(
          `UPDATE index_position SET next_seq = (SELECT max(seq) + 1 FROM deliveries), next_chunks = 0,
            backfill_seq = (SELECT max(seq) FROM deliveries), backfill_chunks = 0`,
        )
        .run();
      await store.indexStep({ maxMs: 1000, maxRows: 100 }, () => {
        levels.push(Number(store.db.pragma('synchronous', { simple: true })));
        return null;
      });
      expect(levels).toEqual([1]);
      expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    });

    it('uses synchronous=NORMAL with durability relaxed', () => {
      expect(open('relaxed').db.pragma('synchronous', { simple: true })).toBe(1);
    });

    it('keeps FULL when the file is already in WAL mode, where better-sqlite3 would default to NORMAL', async () => {
      await open('relaxed').close();
      const bare = otherConnection();
      // The pitfall this guards against: a plain connection on a WAL file is NORMAL.
      expect(bare.pragma('synchronous', { simple: true })).toBe(1);
      expect(open('full').db.pragma('synchronous', { simple: true })).toBe(2);
    });

    it('sets FULL on every connection that openDatabase opens', () => {
      open('full');
      const second = openDatabase({ file, durability: 'full' });
      opened.push(second);
      expect(second.pragma('synchronous', { simple: true })).toBe(2);
      expect(second.pragma('journal_mode', { simple: true })).toBe('wal');
    });

    it('checkpoints the WAL every WAL_CHECKPOINT_PAGES pages, so the WAL file stays small', async () => {
      const store = open('full');
      expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(WAL_CHECKPOINT_PAGES);
      const pageSize = Number(store.db.pragma('page_size', { simple: true }));
      const limit = WAL_CHECKPOINT_PAGES * pageSize;
      const walFileBytes = (frames: number): number => 32 + frames * (24 + pageSize);
      // Four times the threshold in rows of 8 KiB: without the checkpoints the WAL would hold it all.
      const raw = Buffer.alloc(8192, 0x61);
      for (let written = 0; written < 4 * limit; written += 10 * raw.length) {
        await store.append(Array.from({ length: 10 }, () => newDelivery({ raw })));
      }
      const walBytes = statSync(`${file}-wal`).size;
      expect(walBytes).toBeGreaterThan(0);
      // The threshold, plus the last commit's pages that crossed it (its rows, the counts per source, type and
      // time bucket, and the search index's own commit of the batch behind it).
      expect(walBytes).toBeLessThanOrEqual(walFileBytes(WAL_CHECKPOINT_PAGES + 60));
    });

    it('runs in WAL mode, which persists in the file', () => {
      expect(open().db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(otherConnection().pragma('journal_mode', { simple: true })).toBe('wal');
    });

    it('waits busyTimeoutMs for a lock, 1000 ms by default', () => {
      expect(open('full', 250).db.pragma('busy_timeout', { simple: true })).toBe(250);
      expect(open('full').db.pragma('busy_timeout', { simple: true })).toBe(1000);
    });
  });

  describe('file modes', () => {
    it('makes a new inbox readable by its user only: directory 0700, database, WAL and shm 0600', async () => {
      const store = open();
      await store.append([newDelivery()]);
      expect(statSync(join(dir.path, 'nested')).mode & 0o777).toBe(0o700);
      for (const suffix of ['', '-wal', '-shm']) expect(statSync(`${file}${suffix}`).mode & 0o777, suffix).toBe(0o600);
      expect(permissionWarning(file)).toBeUndefined();
    });

    it('leaves the mode of an existing inbox as it is, and warns when others can read it', async () => {
      await open().close();
      chmodSync(file, 0o644);
      open();
      expect(statSync(file).mode & 0o777).toBe(0o644);
      expect(permissionWarning(file)).toMatch(/can be read by other users of this machine \(mode 0644\).*chmod 600/);
    });
  });

  describe('migrations', () => {
    const applied = (db: Database): number[] =>
      db
        .prepare<[], { version: number }>('SELECT version FROM reception_migrations ORDER BY version')
        .all()
        .map((r) => r.version);

    it('creates the directory and applies every migration on a new file', () => {
      const store = open();
      expect(applied(store.db)).toEqual(loadMigrations(SQLITE_MIGRATIONS).map((m) => m.version));
      expect(loadMigrations(SQLITE_MIGRATIONS).length).toBeGreaterThan(0);
    });

    it('applies nothing again when the file is reopened, and keeps the inbox', async () => {
      const first = open();
      const delivery = newDelivery();
      await first.append([delivery]);
      await first.close();
      const again = open();
      expect(applied(again.db)).toEqual(loadMigrations(SQLITE_MIGRATIONS).map((m) => m.version));
      expect(migrate(again.db)).toBe(0);
      expect((await again.get(delivery.id))?.raw.equals(delivery.raw)).toBe(true);
    });

    it('lets two stores opened on the same new file at once both work', async () => {
      const results = await openStoresAtOnce(dir.path, file, 4);
      expect(results.filter((r) => !r.ok)).toEqual([]);
      const seqs = results.map((r) => (r.ok ? r.seq : -1));
      expect(new Set(seqs).size).toBe(4);
      const check = otherConnection();
      expect(applied(check)).toEqual(loadMigrations(SQLITE_MIGRATIONS).map((m) => m.version));
      expect(check.prepare('SELECT count(*) AS n FROM deliveries').get()).toEqual({ n: 4 });
    });

    it('escapes the dedup keys stored before escaping (000009), so that their repeats are still duplicates', async () => {
      // As better-sqlite3 12 (Node 20) wrote them before 000009: as sent, NUL as a
      // byte, a lone surrogate as its three WTF-8 bytes; written here as bytes, which
      // better-sqlite3 13 could not write from a string.
      const old: Array<[key: string, bytes: string]> = [
        ['\\', '5C'],
        ['\\\\', '5C5C'],
        ['C:\\path\\0', '433A5C706174685C30'],
        ['a\u0000b', '610062'],
        ['evt_\ud800', '6576745FEDA080'],
        ['evt_\udbff', '6576745FEDAFBF'],
        ['evt_\udc00x\udfff', '6576745FEDB08078EDBFBF'],
        ['\\ud800', '5C7564383030'],
        ['plain \ud7ff\u{1f600}', '706C61696E20ED9FBFF09F9880'],
      ];
      mkdirSync(dirname(file), { recursive: true });
      const db = new Database(file);
      db.exec('CREATE TABLE reception_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
      for (const migration of loadMigrations(SQLITE_MIGRATIONS).filter((m) => m.version <= 8)) {
        db.exec(migration.sql);
        db.prepare('INSERT INTO reception_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
      }
      const insert = db.prepare(`INSERT INTO deliveries (id, source, received_at, method, query, content_type,
          remote_address, headers, raw, verification_status, dedup_key, event_type)
        VALUES (?, 'old', ?, 'POST', '', 'application/json', '127.0.0.1', '[]', X'7B7D', 'unverified', CAST(unhex(?) AS TEXT), '')`);
      old.forEach(([, bytes], index) => insert.run(`old-${index}`, index, bytes));
      insert.run('old-none', 99, null);
      db.close();

      const store = open();
      const repeats = await store.append(old.map(([dedupKey]) => newDelivery({ source: 'old', dedupKey })));
      expect(repeats.map((o) => [o.id, o.duplicate])).toEqual(old.map((_, index) => [`old-${index}`, true]));
      for (const [index, [key]] of old.entries()) expect((await store.get(`old-${index}`))?.dedupKey).toBe(key);
      expect((await store.get('old-none'))?.dedupKey).toBeNull();
      const others = await store.append(
        ['\\\\\\', 'evt_\ufffd', 'a', 'evt_'].map((dedupKey) => newDelivery({ source: 'old', dedupKey })),
      );
      expect(others.map((o) => o.duplicate)).toEqual([false, false, false, false]);
    });

    it('lets two stores on one file share the inbox', async () => {
      const a = open();
      const b = open();
      const delivery = newDelivery();
      await a.append([delivery]);
      expect((await b.get(delivery.id))?.id).toBe(delivery.id);
      const [next] = await b.append([newDelivery()]);
      expect((await a.list({ limit: 10 }))[0]?.seq).toBe(next?.seq);
    });
  });

  describe('a lock held by another connection', () => {
    it('makes append wait busyTimeoutMs, then reject with StoreUnavailableError', async () => {
      const store = open('full', 200);
      const locker = otherConnection();
      locker.exec('BEGIN EXCLUSIVE');
      locker.prepare("INSERT INTO reception_migrations (version, name, applied_at) VALUES (999, 'lock', 0)").run();
      const delivery = newDelivery();
      const started = performance.now();
      const error = await store.append([delivery]).catch((e: unknown) => e);
      const waited = performance.now() - started;
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(String((error as Error).message)).toMatch(/SQLITE_BUSY/);
      expect(waited).toBeGreaterThanOrEqual(150);
      locker.exec('ROLLBACK');
      expect(await store.get(delivery.id)).toBeUndefined();
      const outcomes = await store.append([delivery]);
      expect(outcomes[0]?.id).toBe(delivery.id);
    });

    it('makes checkWritable reject with StoreUnavailableError until it is released', async () => {
      const store = open('full', 50);
      const locker = otherConnection();
      locker.exec('BEGIN IMMEDIATE');
      await expect(store.checkWritable()).rejects.toBeInstanceOf(StoreUnavailableError);
      locker.exec('COMMIT');
      await expect(store.checkWritable()).resolves.toBeUndefined();
    });

    it('still lets the inbox be read', async () => {
      const store = open('full', 50);
      const delivery = newDelivery();
      await store.append([delivery]);
      const locker = otherConnection();
      locker.exec('BEGIN EXCLUSIVE');
      locker.prepare('DELETE FROM deliveries').run();
      expect((await store.list({ limit: 10 })).map((d) => d.id)).toEqual([delivery.id]);
      expect((await store.get(delivery.id))?.id).toBe(delivery.id);
      locker.exec('ROLLBACK');
    });
  });

  it('makes a committed delivery visible to another connection at once', async () => {
    const store = open();
    const delivery = newDelivery();
    const [outcome] = await store.append([delivery]);
    const row = otherConnection().prepare('SELECT seq, id FROM deliveries WHERE id = ?').get(delivery.id);
    expect(row).toEqual({ seq: outcome?.seq, id: delivery.id });
  });

  it('search indexing reads about 1 MiB of new rows per step, not maxRows of large bodies, and indexes them all', async () => {
    const store = open('relaxed');
    const big = Buffer.from(`{"data":"${'w'.repeat(700 * 1024)}"}`);
    await store.append(newDeliveries(4, { raw: big }));
    const chunksEach = Math.ceil(big.length / (64 * 1024));
    const first = await store.indexStep({ maxMs: 60_000, maxRows: 500 }, () => null);
    // One row of 700 KiB fits the step's reading, a second would not: its chunks alone, and more to come.
    expect(first).toEqual({ done: chunksEach, more: true });
    let steps = 1;
    for (let more = true; more; steps++) more = (await store.indexStep({ maxMs: 60_000, maxRows: 500 }, () => null)).more;
    expect(steps).toBe(4);
    const found = await store.list({ limit: 10, text: 'wwwwww' });
    expect(found).toHaveLength(4);
  });

  it('indexes a large delivery one chunk per step when time is short, and stops at one deleted midway', async () => {
    const store = open('relaxed');
    const big = Buffer.from(`{"data":"${'v'.repeat(300 * 1024)}"}`);
    const [kept, gone] = await store.append(newDeliveries(2, { raw: big }));
    const chunksEach = Math.ceil(big.length / (64 * 1024));
    const step = (): Promise<{ done: number; more: boolean }> => store.indexStep({ maxMs: 0, maxRows: 500 }, () => null);
    for (let i = 0; i < chunksEach; i++) expect(await step()).toEqual({ done: 1, more: true });
    // The second delivery: two chunks, then it is deleted, and the rest of it is never indexed.
    await step();
    await step();
    expect(await store.delete(gone?.id ?? '')).toBe(true);
    let steps = 0;
    for (let more = true; more && steps < 100; steps++) more = (await step()).more;
    expect(steps).toBe(1);
    const found = await store.list({ limit: 10, text: 'vvvvvv' });
    expect(found.map((d) => d.id)).toEqual([kept?.id]);
  });

  it('close can be called twice', async () => {
    const store = open();
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    expect(store.db.open).toBe(false);
  });
});
