import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchRefusedError } from '../../platform/db/store-errors.js';
import { POSTGRES_MIGRATIONS } from '../../platform/db/postgres/migrate.js';
import { loadMigrations } from '../../platform/db/migrations.js';
import { PostgresStore } from '../postgres-store.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../../../test/helpers/postgres.js';
import { newDelivery } from '../../../test/helpers/delivery-factory.js';
import { describeInboxStore } from './inbox-store-contract.js';

const run = await requirePostgres('the PostgreSQL store tests');

describe.runIf(run)('PostgresStore', () => {
  describeInboxStore('PostgresStore', async () => {
    const schema = freshSchema();
    const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 4 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await dropSchema(schema);
      },
    };
  });

  describe('on a real database', () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('migrates once when several instances start at the same moment', async () => {
      const schema = freshSchema();
      cleanups.push(() => dropSchema(schema));
      const stores = await Promise.all(
        [1, 2, 3, 4].map(() => PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 2 })),
      );
      for (const store of stores) cleanups.push(() => store.close());
      const client = new pg.Client({ connectionString: testDatabaseUrl() });
      await client.connect();
      const rows = (await client.query(`SELECT version FROM ${schema}.reception_migrations ORDER BY version`)).rows;
      await client.end();
      expect(rows).toEqual(loadMigrations(POSTGRES_MIGRATIONS).map((m) => ({ version: m.version })));
      const [a, b] = stores;
      const outcome = await a?.append([newDelivery({ source: 'x' })]);
      expect((await b?.get(outcome?.[0]?.id ?? ''))?.source).toBe('x');
    });

    it('keeps bytes that jsonb refuses: NUL and invalid UTF-8', async () => {
      const schema = freshSchema();
      const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      cleanups.push(
        () => dropSchema(schema),
        () => store.close(),
      );
      const raw = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x22, 0x5c, 0x75, 0x30, 0x30, 0x30, 0x30, 0x7d]);
      const [outcome] = await store.append([newDelivery({ raw })]);
      expect((await store.get(outcome?.id ?? ''))?.raw.equals(raw)).toBe(true);
    });

    it('refuses a NUL in a column that the receiver never fills with one as BatchRefusedError, and takes the next batch on the same pool', async () => {
      const schema = freshSchema();
      const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 1 });
      cleanups.push(
        () => dropSchema(schema),
        () => store.close(),
      );
      for (const odd of [
        { query: 'a=\u0000' },
        { contentType: 'application/json\u0000' },
        { remoteAddress: '\u0000' },
        { source: 'a\u0000' },
      ]) {
        await expect(store.append([newDelivery(), newDelivery(odd)]), JSON.stringify(odd)).rejects.toBeInstanceOf(
          BatchRefusedError,
        );
      }
      const [outcome] = await store.append([newDelivery({ dedupKey: 'fine\u0000' })]);
      expect((await store.get(outcome?.id ?? ''))?.dedupKey).toBe('fine\u0000');
    });

    it('escapes the backslashes of dedup keys stored before escaping, so that their repeats are still duplicates', async () => {
      const schema = freshSchema();
      const before = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      cleanups.push(() => dropSchema(schema));
      // `\` and `\\`: the first's new form is the second's old one, which a one-step UPDATE refused (unique index).
      const keys = ['C:\\path\\0', 'plain', '\\', '\\\\'];
      const stored = await before.append(keys.map((dedupKey) => newDelivery({ dedupKey })));
      await before.close();
      // As an older version left them: keys as sent, migration 3 not applied.
      const client = new pg.Client({ connectionString: testDatabaseUrl() });
      await client.connect();
      await client.query(`UPDATE ${schema}.deliveries SET dedup_key = replace(dedup_key, E'\\\\\\\\', E'\\\\')`);
      expect(
        (await client.query(`SELECT dedup_key FROM ${schema}.deliveries ORDER BY seq`)).rows.map(
          (r: { dedup_key: string }) => r.dedup_key,
        ),
      ).toEqual(keys);
      await client.query(`DELETE FROM ${schema}.reception_migrations WHERE version = 3`);
      await client.end();

      const after = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      cleanups.push(() => after.close());
      const repeats = await after.append(keys.map((dedupKey) => newDelivery({ dedupKey })));
      expect(repeats.map((o) => [o.id, o.duplicate])).toEqual(stored.map((o) => [o.id, true]));
      for (const [index, outcome] of stored.entries()) expect((await after.get(outcome.id))?.dedupKey).toBe(keys[index]);
    });

    it('lists sources in code point order under a database collation that sorts otherwise, from the index', async () => {
      const schema = freshSchema();
      const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      cleanups.push(
        () => dropSchema(schema),
        () => store.close(),
      );
      const client = new pg.Client({ connectionString: testDatabaseUrl() });
      await client.connect();
      cleanups.push(() => client.end());
      // ICU's root collation puts 'a' before 'B' and ignores '-' and ' ' at first: the order of a database in en_US.UTF-8.
      await client.query(`ALTER TABLE ${schema}.sources ALTER COLUMN source TYPE text COLLATE "und-x-icu"`);
      const names = ['A', 'B', 'a', 'a b', 'a-b', 'ab', 'b', '\uff5a', '\u{1f600}'];
      await store.append([...names].reverse().map((source) => newDelivery({ source })));
      const first = (await store.sources({ limit: 4 })).map((s) => s.source);
      const rest = (await store.sources({ limit: 10, after: first[first.length - 1] ?? '' })).map((s) => s.source);
      expect([...first, ...rest]).toEqual(names);
      await client.query(`SET search_path = ${schema}`);
      await client.query('SET enable_seqscan = off');
      const plan = (
        await client.query(
          'EXPLAIN SELECT source FROM sources WHERE source COLLATE "C" > $1 ORDER BY source COLLATE "C" LIMIT 100',
          ['a'],
        )
      ).rows;
      expect(JSON.stringify(plan)).toContain('sources_by_name');
    });

    it('hands out seq in commit order across instances', async () => {
      const schema = freshSchema();
      const stores = await Promise.all(
        [1, 2, 3].map(() => PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 3 })),
      );
      cleanups.push(() => dropSchema(schema));
      for (const store of stores) cleanups.push(() => store.close());
      const reader = stores[0];
      if (reader === undefined) throw new Error('no store');
      // Readers following "after seq N" while three writers commit concurrently must see every row once.
      const seen: number[] = [];
      let position = 0;
      let writing = true;
      const follow = (async () => {
        while (writing || seen.length < 300) {
          const rows = await reader.readAfter(position, 50);
          for (const row of rows) {
            seen.push(row.seq);
            position = row.seq;
          }
          if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
        }
      })();
      await Promise.all(
        stores.map(async (store) => {
          for (let i = 0; i < 20; i++) await store.append(Array.from({ length: 5 }, () => newDelivery()));
        }),
      );
      writing = false;
      await follow;
      expect(seen.length).toBe(300);
      expect(new Set(seen).size).toBe(300);
      expect(seen.every((seq, i) => i === 0 || seq > (seen[i - 1] ?? Infinity))).toBe(true);
    });
    it('search indexing reads about 1 MiB of new rows per step, not maxRows of large bodies, and indexes them all', async () => {
      const schema = freshSchema();
      const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 2 });
      cleanups.push(
        () => dropSchema(schema),
        () => store.close(),
      );
      // Bodies of 300 KiB: three fit a step's 1 MiB of reading, a fourth would not.
      const body = (i: number): Buffer => Buffer.from(`{"data":"marker-${i}-${'w'.repeat(300 * 1024)}"}`);
      const outcomes = await store.append(
        Array.from({ length: 12 }, (_, i) => newDelivery({ raw: body(i), eventType: `large.${i}` })),
      );
      const steps: Array<{ done: number; more: boolean }> = [];
      for (let more = true; more && steps.length < 20;) {
        const progress = await store.indexStep({ maxMs: 60_000, maxRows: 500 }, () => null);
        steps.push(progress);
        more = progress.more;
      }
      expect(steps).toEqual([
        { done: 3, more: true },
        { done: 3, more: true },
        { done: 3, more: true },
        { done: 3, more: false },
      ]);
      for (const [i, outcome] of outcomes.entries()) {
        const found = await store.list({ text: `"marker-${i}-www`, limit: 10 });
        expect(found.map((d) => [d.id, d.eventType])).toEqual([[outcome.id, `large.${i}`]]);
      }
    });
  });
});
