import { describe } from 'vitest';
import { PostgresStore } from '../../../inbox/postgres-store.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../../../../test/helpers/postgres.js';
import { postgresFixture, sqliteFixture } from '../../../../test/helpers/store-fixtures.js';
import { describeConcurrentClaims } from './outbox-concurrency.js';
import { describeOutbox } from './outbox-contract.js';

describeOutbox('SqliteStore', sqliteFixture);

const run = await requirePostgres('the PostgreSQL outbox tests');

describe.runIf(run)('PostgresStore outbox', () => {
  describeOutbox('PostgresStore', postgresFixture);

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
