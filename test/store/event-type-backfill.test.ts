import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { eventTypeOf } from '../../src/event-types/event-type.js';
import type { StoredDelivery } from '../../src/deliveries/delivery-store.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { loadMigrations } from '../../src/platform/db/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/platform/db/postgres/migrate.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import { Database } from '../../src/platform/db/sqlite/driver.js';
import { SQLITE_MIGRATIONS } from '../../src/platform/db/sqlite/migrate.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { startAppOn } from '../helpers/app.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { indexAll } from '../../src/inbox/contract/inbox-store-contract-finding.js';

/**
 * Deliveries stored before event types and search existed (migrations
 * SQLite 000006, PostgreSQL 000008) get their type, its count and their
 * place in the search index from the background fill, on both stores.
 */

/** A delivery row as the tables were before the migration. */
interface OldRow {
  id: string;
  source: string;
  receivedAt: number;
  contentType: string;
  headers: Array<[string, string]>;
  raw: Buffer;
  scheme: string | null;
}

const OLD_ROWS: OldRow[] = [
  {
    id: 'old-1',
    source: 'gh',
    receivedAt: 1_000,
    contentType: 'application/json',
    headers: [['X-GitHub-Event', 'pull_request']],
    raw: Buffer.from('{"action":"opened","title":"Old search target"}'),
    scheme: 'github',
  },
  {
    id: 'old-2',
    source: 'shop',
    receivedAt: 2_000,
    contentType: 'application/json',
    headers: [['X-Shop-Event', 'order.paid']],
    raw: Buffer.from('{"type":"ignored because the source names a header"}'),
    scheme: null,
  },
  {
    id: 'old-3',
    source: 'plain',
    receivedAt: 3_000,
    contentType: 'application/x-www-form-urlencoded',
    headers: [['X-Trace', 'needle-in-a-header']],
    raw: Buffer.from('event_type=form.sent&a=1'),
    scheme: null,
  },
  {
    id: 'old-4',
    source: 'plain',
    receivedAt: 4_000,
    contentType: 'application/json',
    headers: [],
    raw: Buffer.from(`{"big":"${'x'.repeat(200_000)}FAR-INSIDE"}`),
    scheme: null,
  },
];

/** What the app derives: the receiver's rules, with the source `shop` reading its type from a header. */
const derive = (d: StoredDelivery): string | null =>
  eventTypeOf(
    { scheme: d.verification.scheme, headers: d.headers, contentType: d.contentType, raw: d.raw },
    d.source === 'shop' ? { header: 'X-Shop-Event' } : undefined,
  );

const OLD_INSERT = `INSERT INTO deliveries (id, source, received_at, method, query, content_type, remote_address, headers, raw,
  verification_status, verification_scheme, verification_reason, dedup_key)`;

function oldValues(row: OldRow): unknown[] {
  return [
    row.id,
    row.source,
    row.receivedAt,
    'POST',
    '',
    row.contentType,
    '127.0.0.1',
    JSON.stringify(row.headers),
    row.raw,
    row.scheme === null ? 'none' : 'verified',
    row.scheme,
    null,
    null,
  ];
}

/** Old deliveries of 300 KiB bodies: three of them fit a step's READ_BYTES (1 MiB), a fourth would not. */
const LARGE_OLD_ROWS: OldRow[] = Array.from({ length: 12 }, (_, i) => ({
  id: `large-${String(i).padStart(2, '0')}`,
  source: 'large',
  receivedAt: 10_000 + i,
  contentType: 'application/json',
  headers: [],
  raw: Buffer.from(`{"type":"large.${i}","data":"marker-${i}-${'w'.repeat(300 * 1024)}"}`),
  scheme: null,
}));

/** A SQLite file with the schema before migration 000006 and the old rows in it. */
function oldSqliteFile(dir: string, rows: readonly OldRow[]): string {
  const file = join(dir, 'reception.sqlite');
  const db = new Database(file);
  db.exec('CREATE TABLE reception_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const migration of loadMigrations(SQLITE_MIGRATIONS).filter((m) => m.version < 6)) {
    db.exec(migration.sql);
    db.prepare('INSERT INTO reception_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
  }
  const insert = db.prepare(`${OLD_INSERT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const count = db.prepare(`INSERT INTO sources VALUES (?, 1, ?)
    ON CONFLICT (source) DO UPDATE SET count = count + 1, last_received_at = max(last_received_at, excluded.last_received_at)`);
  for (const row of rows) {
    insert.run(...oldValues(row));
    count.run(row.source, row.receivedAt);
  }
  db.close();
  return file;
}

/** A PostgreSQL schema before migration 000008, with the old rows. */
async function oldPostgresSchema(schema: string, rows: readonly OldRow[]): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}`);
    await client.query(`CREATE TABLE reception_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    for (const migration of loadMigrations(POSTGRES_MIGRATIONS).filter((m) => m.version < 8)) {
      await client.query(migration.sql);
      await client.query('INSERT INTO reception_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    for (const row of rows) {
      await client.query(`${OLD_INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, oldValues(row));
      await client.query(
        `INSERT INTO sources VALUES ($1, 1, $2) ON CONFLICT (source) DO UPDATE SET count = sources.count + 1,
          last_received_at = greatest(sources.last_received_at, excluded.last_received_at)`,
        [row.source, row.receivedAt],
      );
    }
  } finally {
    await client.end();
  }
}

const runPostgres = await requirePostgres('the event type fill on PostgreSQL');

describe.each([
  ['sqlite', true],
  ['postgres', runPostgres],
] as const)('deliveries stored before event types, on %s', (kind, run) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** The store opened on the old data: the migration runs, the fill has not. */
  async function openOld(rows: readonly OldRow[] = OLD_ROWS): Promise<InboxDatabase> {
    if (kind === 'sqlite') {
      const dir = tempDir();
      cleanups.push(async () => dir.remove());
      const store = new SqliteStore({ file: oldSqliteFile(dir.path, rows), durability: 'relaxed' });
      cleanups.push(() => store.close().catch(() => undefined));
      return store;
    }
    const schema = freshSchema();
    cleanups.push(() => dropSchema(schema));
    await oldPostgresSchema(schema, rows);
    const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 2 });
    cleanups.push(() => store.close().catch(() => undefined));
    return store;
  }

  const typesOf = async (store: InboxDatabase): Promise<Record<string, string | null>> =>
    Object.fromEntries((await store.list({ limit: 10 })).map((d) => [d.id, d.eventType]));

  it.runIf(run)('have no type, count and search hit until the fill reaches them; then as if received now', async () => {
    const store = await openOld();
    expect(Object.values(await typesOf(store))).toEqual([null, null, null, null]);
    expect(await store.eventTypes({ limit: 10 })).toEqual([]);
    expect(await store.list({ text: 'search target', limit: 10 })).toEqual([]);
    // A delivery received after the migration has its type at once.
    const [fresh] = await store.append([
      {
        id: 'new-1',
        source: 'plain',
        receivedAt: 9_000,
        method: 'POST',
        query: '',
        contentType: 'application/json',
        remoteAddress: '127.0.0.1',
        headers: [],
        raw: Buffer.from('{"type":"new.one"}'),
        verification: { status: 'none' },
        dedupKey: null,
        eventType: 'new.one',
      },
    ]);
    expect(fresh?.duplicate).toBe(false);

    await indexAll(store, derive);
    expect(await typesOf(store)).toEqual({
      'new-1': 'new.one',
      'old-4': null,
      'old-3': 'form.sent',
      'old-2': 'order.paid',
      'old-1': 'pull_request.opened',
    });
    expect(await store.eventTypes({ limit: 10 })).toEqual([
      { source: 'gh', eventType: 'pull_request.opened', count: 1, lastReceivedAt: 1_000 },
      { source: 'plain', eventType: null, count: 1, lastReceivedAt: 4_000 },
      { source: 'plain', eventType: 'form.sent', count: 1, lastReceivedAt: 3_000 },
      { source: 'plain', eventType: 'new.one', count: 1, lastReceivedAt: 9_000 },
      { source: 'shop', eventType: 'order.paid', count: 1, lastReceivedAt: 2_000 },
    ]);
    const ids = async (text: string): Promise<string[]> => (await store.list({ text, limit: 10 })).map((d) => d.id);
    expect(await ids('old search target')).toEqual(['old-1']);
    expect(await ids('NEEDLE-IN')).toEqual(['old-3']);
    expect(await ids('far-inside')).toEqual(['old-4']);
    expect((await store.list({ eventType: { prefix: 'pull_request.' }, limit: 10 })).map((d) => d.id)).toEqual(['old-1']);
    // Their times are in the time buckets too: a list by time finds them.
    expect((await store.list({ since: 2_500, until: 4_000, limit: 10 })).map((d) => d.id)).toEqual(['old-3']);
    expect((await store.list({ until: 2_001, limit: 10 })).map((d) => d.id)).toEqual(['old-2', 'old-1']);
    // Done: a step finds nothing more, and a delete keeps the counts right.
    expect((await store.indexStep({ maxMs: 100, maxRows: 10 }, derive)).more).toBe(false);
    await store.delete('old-2');
    expect((await store.eventTypes({ source: 'shop', limit: 10 })).length).toBe(0);
  });

  it.runIf(run)('fills in small steps, newest first, and a delete in between is not counted', async () => {
    const store = await openOld();
    // A tiny budget: one row, or one chunk of a large one, per step.
    const step = (): Promise<{ more: boolean }> => store.indexStep({ maxMs: 0, maxRows: 1 }, derive);
    expect((await step()).more).toBe(true);
    expect(await typesOf(store)).toMatchObject({ 'old-3': null, 'old-2': null, 'old-1': null });
    for (let steps = 0; (await typesOf(store))['old-3'] === null; steps++) {
      expect(steps).toBeLessThan(20);
      await step();
    }
    expect(await typesOf(store)).toMatchObject({ 'old-2': null, 'old-1': null });
    await store.delete('old-1');
    while ((await step()).more);
    expect((await store.eventTypes({ limit: 10 })).map((t) => `${t.source}/${t.eventType}`).sort()).toEqual([
      'plain/form.sent',
      'plain/null',
      'shop/order.paid',
    ]);
  });

  /** How many of the large old deliveries have their type. */
  const typedLarge = async (store: InboxDatabase): Promise<number> =>
    (await store.list({ source: 'large', limit: 100 })).filter((d) => d.eventType !== null).length;

  /** Every large old delivery is typed, and found by the text of its body. */
  async function expectLargeFilled(store: InboxDatabase): Promise<void> {
    expect(await typedLarge(store)).toBe(LARGE_OLD_ROWS.length);
    for (const [i, row] of LARGE_OLD_ROWS.entries()) {
      const found = await store.list({ text: `"marker-${i}-www`, limit: 10 });
      expect(found.map((d) => [d.id, d.eventType])).toEqual([[row.id, `large.${i}`]]);
    }
  }

  it.runIf(run)('fills about 1 MiB of large old deliveries per step, not maxRows of them, and fills them all', async () => {
    const store = await openOld(LARGE_OLD_ROWS);
    const step = (): Promise<{ more: boolean }> => store.indexStep({ maxMs: 60_000, maxRows: 500 }, derive);
    // Three bodies of 300 KiB a step (a fourth would pass 1 MiB): the rows a step typed are the rows it read.
    const typed: number[] = [];
    const more: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      more.push((await step()).more);
      typed.push(await typedLarge(store));
    }
    expect(typed).toEqual([3, 6, 9, 12]);
    // PostgreSQL knows it reached the oldest row; SQLite finds it out at the next step.
    expect(more).toEqual([true, true, true, kind === 'sqlite']);
    expect((await step()).more).toBe(false);
    await expectLargeFilled(store);
  });

  it.runIf(run)('fills only what a step has left of its 1 MiB after new deliveries', async () => {
    const store = await openOld(LARGE_OLD_ROWS);
    await store.append([
      {
        id: 'new-large',
        source: 'plain',
        receivedAt: 90_000,
        method: 'POST',
        query: '',
        contentType: 'application/json',
        remoteAddress: '127.0.0.1',
        headers: [],
        raw: Buffer.from(`{"data":"new-marker-${'v'.repeat(700 * 1024)}"}`),
        verification: { status: 'none' },
        dedupKey: null,
        eventType: null,
      },
    ]);
    const step = (): Promise<{ more: boolean }> => store.indexStep({ maxMs: 60_000, maxRows: 500 }, derive);
    // 700 KiB of new delivery, then one old row of 300 KiB: a second would pass 1 MiB.
    const first = await step();
    expect(await typedLarge(store)).toBe(1);
    expect(first.more).toBe(true);
    expect((await store.list({ text: 'new-marker-vvv', limit: 10 })).map((d) => d.id)).toEqual(['new-large']);
    expect((await step()).more).toBe(true);
    expect(await typedLarge(store)).toBe(4);
    for (let steps = 0; (await step()).more; steps++) expect(steps).toBeLessThan(10);
    await expectLargeFilled(store);
  });

  it.runIf(run)('fills an old delivery larger than 1 MiB in a step of its own', async () => {
    const huge = (i: number): OldRow => ({
      ...(LARGE_OLD_ROWS[i] as OldRow),
      raw: Buffer.from(`{"type":"large.${i}","data":"marker-${i}-${'w'.repeat(2 * 1024 * 1024)}"}`),
    });
    const store = await openOld([huge(0), huge(1), huge(2)]);
    const typed: number[] = [];
    for (let i = 0; i < 3; i++) {
      await store.indexStep({ maxMs: 60_000, maxRows: 500 }, derive);
      typed.push(await typedLarge(store));
    }
    expect(typed).toEqual([1, 2, 3]);
    for (let i = 0; i < 3; i++) {
      const found = await store.list({ text: `"marker-${i}-www`, limit: 10 });
      expect(found.map((d) => d.eventType)).toEqual([`large.${i}`]);
    }
  });

  it.runIf(run)('is filled by the running app in the background, after it starts', async () => {
    const store = await openOld();
    const server = await startAppOn(store);
    cleanups.unshift(() => server.close().catch(() => undefined));
    await server.app.index.caughtUp();
    const page = (await (
      await fetch(`${server.url}/api/deliveries?eventType=pull_request.*`, { headers: server.auth })
    ).json()) as {
      items: Array<{ id: string; eventType: string | null }>;
    };
    expect(page.items.map((d) => [d.id, d.eventType])).toEqual([['old-1', 'pull_request.opened']]);
    const types = (await (await fetch(`${server.url}/api/event-types?source=gh`, { headers: server.auth })).json()) as {
      items: unknown[];
    };
    expect(types.items).toEqual([
      { source: 'gh', eventType: 'pull_request.opened', count: 1, lastReceivedAt: new Date(1_000).toISOString() },
    ]);
  });
});
