import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { PostgresStore } from '../../src/inbox/postgres-store.js';
import { startAppOnSqlite, startAppOn, startAppOnPostgres, type RunningApp } from '../helpers/app.js';
import { requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';

/**
 * `/readyz` says "store writable" (CONTRACT 5) only when a write commits
 * (issue 16, item 4), and asks the store at most once a second however
 * often it is polled. The SQLite full-disk cases are in
 * storage-unavailable.test.ts and full-disk.test.ts.
 */

const onPostgres = await requirePostgres('the readiness tests on PostgreSQL');
const running: Array<RunningApp<InboxDatabase>> = [];

afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

async function readyzBecomes(server: RunningApp<InboxDatabase>, status: number): Promise<Response> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const answer = await fetch(`${server.url}/readyz`);
    if (answer.status === status || Date.now() > deadline) {
      expect(answer.status).toBe(status);
      return answer;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const BACKENDS: Array<{ name: string; run: boolean; open: () => Promise<RunningApp<InboxDatabase>> }> = [
  { name: 'SQLite', run: true, open: () => startAppOnSqlite() },
  { name: 'PostgreSQL', run: onPostgres, open: () => startAppOnPostgres() },
];

for (const backend of BACKENDS) {
  describe.runIf(backend.run)(`/readyz on ${backend.name}`, () => {
    it('asks the store at most once a second, however often it is polled', async () => {
      const plain = await backend.open();
      running.push(plain);
      // The same store, seen through a view that counts the readiness probes.
      let probes = 0;
      const counting = Object.create(plain.store) as InboxDatabase;
      counting.checkWritable = () => {
        probes++;
        return plain.store.checkWritable();
      };
      // Closed once, with `plain`.
      counting.close = async () => undefined;
      const server = await startAppOn(counting);
      running.push(server);
      const started = performance.now();
      let answers = 0;
      while (performance.now() - started < 900) {
        const burst = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/readyz`)));
        for (const answer of burst) expect(answer.status).toBe(200);
        answers += burst.length;
      }
      expect(answers).toBeGreaterThan(100);
      expect(probes).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(probes).toBe(2);
    });
  });
}

describe.runIf(onPostgres)('/readyz and DELETE on PostgreSQL that cannot write', () => {
  async function withTrigger(
    store: PostgresStore,
    table: string,
    timing: 'UPDATE' | 'DELETE',
    errcode: string,
  ): Promise<() => Promise<void>> {
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    const name = `refuse_${table}`;
    await client.query(`CREATE FUNCTION ${store.schema}.${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '${errcode}'; END $$`);
    await client.query(`CREATE TRIGGER ${name} BEFORE ${timing} ON ${store.schema}.${table}
      FOR EACH ROW EXECUTE FUNCTION ${store.schema}.${name}()`);
    return async () => {
      await client.query(`DROP TRIGGER ${name} ON ${store.schema}.${table}; DROP FUNCTION ${store.schema}.${name}()`);
      await client.end();
    };
  }

  for (const [what, errcode] of [
    ['a full disk', 'disk_full'],
    ['a read-only transaction', 'read_only_sql_transaction'],
  ]) {
    it(`answers /readyz 503 while a write cannot commit (${what}), and 200 once it can`, async () => {
      const server = await startAppOnPostgres();
      running.push(server);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const lift = await withTrigger(server.store, 'reception_probe', 'UPDATE', errcode ?? '');
      const refused = await readyzBecomes(server, 503);
      expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(await refused.json()).toEqual({ status: 'unavailable', store: 'postgres' });
      await lift();
      expect(await (await readyzBecomes(server, 200)).json()).toEqual({ status: 'ready', store: 'postgres' });
    });
  }

  it('answers DELETE /api/deliveries/{id} 503 storage_unavailable with Retry-After on a full disk', async () => {
    const server = await startAppOnPostgres();
    running.push(server);
    const posted = await fetch(`${server.url}/api/webhook/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { id } = (await posted.json()) as { id: string };
    const lift = await withTrigger(server.store, 'deliveries', 'DELETE', 'disk_full');
    const refused = await fetch(`${server.url}/api/deliveries/${id}`, { method: 'DELETE', headers: server.auth });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await refused.json()).toMatchObject({ code: 'storage_unavailable' });
    await lift();
    expect((await fetch(`${server.url}/api/deliveries/${id}`, { method: 'DELETE', headers: server.auth })).status).toBe(204);
  });
});
