import { describe } from 'vitest';
import { requirePostgres } from '../../../test/helpers/postgres.js';
import { postgresFixture, sqliteFixture } from '../../../test/helpers/store-fixtures.js';
import { describeTrafficStore } from './traffic-store-contract.js';

describeTrafficStore('SqliteStore', sqliteFixture);

const run = await requirePostgres('the PostgreSQL traffic count tests');

describe.runIf(run)('PostgresStore traffic', () => {
  describeTrafficStore('PostgresStore', postgresFixture);
});
