import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { dropSchema, freshSchema, testDatabaseUrl } from './postgres.js';
import { tempDir } from './temp-dir.js';

/** A store for one contract suite, and how to be rid of it. */
export interface StoreFixture<S extends InboxDatabase = InboxDatabase> {
  store: S;
  /** Closes the store and removes whatever opened it created. */
  cleanup: () => Promise<void>;
}

/** Opens a fresh, empty store; called once per test. */
export type OpenStore = () => Promise<StoreFixture>;

/**
 * Opens a fresh store before each test of the enclosing `describe` and
 * cleans it up after; answers how a test reaches the one open now.
 */
export function freshStoreEachTest(open: OpenStore): () => InboxDatabase {
  let subject: StoreFixture | undefined;
  beforeEach(async () => {
    subject = await open();
  });
  afterEach(async () => {
    await subject?.cleanup();
    subject = undefined;
  });
  return () => {
    if (subject === undefined) throw new Error('the store is not open');
    return subject.store;
  };
}

/** A SQLite store on a real file in a temp dir (durability full), removed with it. */
export async function sqliteFixture(): Promise<StoreFixture<SqliteStore>> {
  const dir = tempDir();
  const store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full' });
  return {
    store,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
}

/** A PostgreSQL store in a fresh schema of the test database, dropped with it. */
export async function postgresFixture(): Promise<StoreFixture<PostgresStore>> {
  const schema = freshSchema();
  const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 4 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}
