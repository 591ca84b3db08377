import { join } from 'node:path';
import { describe } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { describeTrafficStore } from './traffic-store-contract.js';

describeTrafficStore('SqliteStore', async () => {
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

const run = await requirePostgres('the PostgreSQL traffic count tests');

describe.runIf(run)('PostgresStore traffic', () => {
  describeTrafficStore('PostgresStore', async () => {
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
});
