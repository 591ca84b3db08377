import { join } from 'node:path';
import { describe } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { describeConcurrentClaims } from './outbox-concurrency.js';
import { describeOutbox } from './outbox-contract.js';

describeOutbox('SqliteStore', async () => {
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

const run = await requirePostgres('the PostgreSQL outbox tests');

describe.runIf(run)('PostgresStore outbox', () => {
  describeOutbox('PostgresStore', async () => {
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

  describeConcurrentClaims(async (count) => {
    const schema = freshSchema();
    const stores: PostgresStore[] = [];
    for (let i = 0; i < count; i++)
      stores.push(await PostgresStore.open({ connectionString: testDatabaseUrl(), schema, poolSize: 2 }));
    return {
      stores,
      cleanup: async () => {
        for (const store of stores) await store.close();
        await dropSchema(schema);
      },
    };
  });
});
