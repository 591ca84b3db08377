import { join } from 'node:path';
import { pino } from 'pino';
import { buildApp, type App, type AppDeps } from '../../src/app.js';
import { Metrics } from '../../src/platform/observe/metrics.js';
import { DEFAULT_REDACTED_HEADERS } from '../../src/platform/http/header-list.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import type { Durability } from '../../src/platform/db/store-errors.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { dropSchema, freshSchema, testDatabaseUrl } from './postgres.js';
import { tempDir } from './temp-dir.js';

export const TEST_TOKEN = 'test-token-0123456789abcdef';

export interface RunningApp<S extends InboxDatabase = InboxDatabase> {
  /** `http://127.0.0.1:<port>` */
  url: string;
  token: string;
  app: App;
  store: S;
  dataDir: string;
  /** Headers that carry the API token. */
  auth: { authorization: string };
  close: () => Promise<void>;
}

export type StoreKind = 'sqlite' | 'postgres';

/**
 * The store the integration tests run on: `RECEPTION_TEST_STORE` (set per
 * project by vitest.config.ts, which runs test/integration once on each),
 * else SQLite.
 */
export function testStoreKind(): StoreKind {
  const kind = process.env.RECEPTION_TEST_STORE ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`RECEPTION_TEST_STORE=${kind}: expected sqlite or postgres`);
  return kind;
}

/**
 * Builds the real app on the test run's store (`testStoreKind()`): a real
 * SQLite file in a temp dir (`durability` applies there), or a fresh schema
 * of the real PostgreSQL. It listens on a loopback port. Logs are discarded
 * unless RECEPTION_TEST_LOGS=1.
 */
export async function startApp(
  overrides: Partial<AppDeps> & { durability?: Durability } = {},
): Promise<RunningApp<InboxDatabase>> {
  if (testStoreKind() === 'postgres') {
    const deps: Partial<AppDeps> & { durability?: Durability } = { ...overrides };
    delete deps.durability; // SQLite's alone
    return startAppOnPostgres(deps);
  }
  return startAppOnSqlite(overrides);
}

/** The app on a real SQLite file in a temp dir, whatever the test run's store: for what only SQLite has. */
export async function startAppOnSqlite(
  overrides: Partial<AppDeps> & { durability?: Durability } = {},
): Promise<RunningApp<SqliteStore>> {
  const dir = tempDir();
  const store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: overrides.durability ?? 'full' });
  return listenOn(store, dir, overrides, async () => undefined);
}

/**
 * The same on PostgreSQL (the machine's test database, see helpers/postgres),
 * in a fresh schema that `close()` drops.
 */
export async function startAppOnPostgres(overrides: Partial<AppDeps> = {}): Promise<RunningApp<PostgresStore>> {
  const dir = tempDir();
  const schema = freshSchema();
  const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
  return listenOn(store, dir, overrides, () => dropSchema(schema));
}

/**
 * The app on a store the test opened itself (to reopen one file, say); the
 * store is closed with the app, its file left where it is.
 */
export async function startAppOn<S extends InboxDatabase>(store: S, overrides: Partial<AppDeps> = {}): Promise<RunningApp<S>> {
  return listenOn(store, tempDir(), overrides, async () => undefined);
}

/** The real app on the store named: SQLite in a temp dir, or PostgreSQL in a fresh schema (dropped on close). */
export async function startAppOnKind(kind: StoreKind, overrides: Partial<AppDeps> = {}): Promise<RunningApp<InboxDatabase>> {
  return kind === 'postgres' ? startAppOnPostgres(overrides) : startAppOnSqlite(overrides);
}

async function listenOn<S extends InboxDatabase>(
  store: S,
  dir: ReturnType<typeof tempDir>,
  overrides: Partial<AppDeps>,
  afterClose: () => Promise<void>,
): Promise<RunningApp<S>> {
  const logger = pino({ level: process.env.RECEPTION_TEST_LOGS === '1' ? 'debug' : 'silent' });
  const app = await buildApp({
    store,
    token: TEST_TOKEN,
    logger,
    metrics: new Metrics(),
    maxBodyBytes: 5 * 1024 * 1024,
    trustedProxies: [],
    redactHeaders: [...DEFAULT_REDACTED_HEADERS],
    requestTimeoutMs: 30_000,
    queueMaxPending: 10_000,
    queueMaxPendingBytes: 256 * 1024 * 1024,
    incomingMaxBytes: 256 * 1024 * 1024,
    streamHeartbeatMs: 15_000,
    streamMaxBufferedBytes: 8 * 1024 * 1024,
    ...overrides,
  });
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    token: TEST_TOKEN,
    app,
    store,
    dataDir: dir.path,
    auth: { authorization: `Bearer ${TEST_TOKEN}` },
    close: async () => {
      app.beginClosing();
      app.server.closeAllConnections();
      await new Promise<void>((resolve) => app.server.close(() => resolve()));
      await app.queue.drain();
      await app.refusals.stop();
      await app.forwarder.stop(0);
      await app.forwardIssues.stop();
      await app.index.stop();
      await app.issues.stop();
      await store.close();
      await afterClose();
      dir.remove();
    },
  };
}
