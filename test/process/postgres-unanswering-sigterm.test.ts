import { describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { API_TOKEN, childrenOf, sleep, timedExit } from '../helpers/server-children.js';

const run = await requirePostgres('the SIGTERM test with a PostgreSQL that stops answering');

/**
 * CONTRACT 5: SIGTERM answers what is in flight, commits and exits. When
 * PostgreSQL stops answering without closing its connections (here a real
 * TCP proxy in front of the test database stops carrying bytes), the commit
 * in flight gives up at the store's query timeout, and the process still
 * ends instead of waiting for an answer that never comes.
 */
describe.runIf(run)('SIGTERM while PostgreSQL stops answering', () => {
  it('gives up the commit in flight at the query timeout and exits, acknowledging nothing it did not commit', async (context) => {
    const children = childrenOf(context);
    const target = new URL(testDatabaseUrl());
    const proxy = await startTcpProxy(target.hostname || '127.0.0.1', Number(target.port || 5432));
    const schema = freshSchema();
    context.onTestFinished(async () => {
      await proxy.close();
      await dropSchema(schema);
    });
    const url = new URL(testDatabaseUrl());
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const server = await children.start({
      RECEPTION_DATABASE_URL: url.toString(),
      RECEPTION_DATABASE_SCHEMA: schema,
      RECEPTION_DATA: children.dataDir(),
      RECEPTION_TOKEN: API_TOKEN,
      RECEPTION_SHUTDOWN_GRACE_MS: '1000',
    });
    const first = await fetch(`${server.url}/api/webhook/before`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    expect(first.status).toBe(200);

    proxy.freezeOpenConnections();
    const stuck = fetch(`${server.url}/api/webhook/frozen`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":2}',
    }).then(
      (res) => res.status,
      () => 'no answer',
    );
    await sleep(300);
    children.signal(server, 'SIGTERM');
    // The query timeout is 11 s (5 × the 2 s store timeout, plus 1 s); before, it waited for ever.
    const exit = await timedExit(server, 25_000);
    expect(exit.code).toBe(0);
    expect(await stuck).not.toBe(200);
    expect(server.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
  }, 40_000);
});
