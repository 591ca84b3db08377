import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';

import { StoreUnavailableError } from '../../src/platform/db/store-errors.js';

import { PostgresStore } from '../../src/inbox/postgres-store.js';

import { PostgresCommitFeed } from '../../src/stream/postgres-commit-feed.js';

import { capturingLogger, type LogLine } from '../helpers/log-capture.js';

import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';

import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

import { newDelivery } from '../helpers/delivery-factory.js';

import { eventually } from '../helpers/eventually.js';

const run = await requirePostgres('the tests of a PostgreSQL that stops answering');

/** The test database's URL, reached through the proxy. */
function throughProxy(proxy: TcpProxy): string {
  const url = new URL(testDatabaseUrl());
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}

/**
 * PostgreSQL that stops answering without closing its connections (a
 * network blackhole, a firewall's silent cut), made real by a TCP proxy in
 * front of the test database that stops carrying bytes.
 */
describe.runIf(run)('a PostgreSQL that stops answering', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('a commit and a read give up with 503 within the query timeout, and the store recovers', async () => {
    const target = new URL(testDatabaseUrl());
    const proxy = await startTcpProxy(target.hostname || '127.0.0.1', Number(target.port || 5432));
    cleanups.push(() => proxy.close());
    const schema = freshSchema();
    cleanups.push(() => dropSchema(schema));
    // timeoutMs 300: statement_timeout 1.5 s on the server, 2.5 s on the client.
    const store = await PostgresStore.open({ connectionString: throughProxy(proxy), schema, poolSize: 2, timeoutMs: 300 });
    cleanups.push(() => store.close());
    expect(await store.append([newDelivery({ source: 'before' })])).toHaveLength(1);

    proxy.freezeOpenConnections();
    const started = Date.now();
    const failed = await store.append([newDelivery({ source: 'frozen' })]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(6000);

    // New connections get through: the next commit and read work.
    expect(await store.append([newDelivery({ source: 'after' })])).toHaveLength(1);
    const sources = (await store.sources()).map((s) => s.source);
    expect(sources).toContain('after');
    expect(sources).toContain('before');

    // A read on a connection that stopped answering gives up too.
    proxy.freezeOpenConnections();
    const readStarted = Date.now();
    const readFailed = await store.sources().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(readFailed).toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - readStarted).toBeLessThan(6000);
  }, 20_000);

  it('the commit feed notices a LISTEN connection that stopped answering, reconnects and wakes its readers', async () => {
    const target = new URL(testDatabaseUrl());
    const proxy = await startTcpProxy(target.hostname || '127.0.0.1', Number(target.port || 5432));
    cleanups.push(() => proxy.close());
    const channel = `reception_${freshSchema()}`;
    const { logger, lines } = capturingLogger();
    const feed = new PostgresCommitFeed(throughProxy(proxy), channel, logger, 300);
    await feed.start();
    cleanups.push(() => feed.stop());
    let wakes = 0;
    feed.subscribe(() => {
      wakes++;
    });

    proxy.freezeOpenConnections();
    const said =
      (msg: string) =>
      (line: LogLine): boolean =>
        line.msg === msg;
    await eventually(() => lines.some(said('commit feed lost its PostgreSQL connection; reconnecting')), 3000);
    await eventually(() => lines.some(said('commit feed reconnected to PostgreSQL')), 5000);
    // Woken once on reconnecting: whatever was committed meanwhile is read.
    expect(wakes).toBeGreaterThanOrEqual(1);

    // And it hears the commits of other instances again.
    const before = wakes;
    const other = new pg.Client({ connectionString: testDatabaseUrl() });
    await other.connect();
    await other.query(`NOTIFY ${channel}`);
    await other.end();
    await eventually(() => wakes > before, 3000);
  }, 20_000);
});
