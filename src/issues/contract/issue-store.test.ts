import { describe } from 'vitest';
import { requirePostgres } from '../../../test/helpers/postgres.js';
import { postgresFixture, sqliteFixture } from '../../../test/helpers/store-fixtures.js';
import { describeIssueStore } from './issue-store-contract.js';

describeIssueStore('SqliteStore', sqliteFixture);

const run = await requirePostgres('the PostgreSQL issue store tests');

describe.runIf(run)('PostgresStore issues', () => {
  describeIssueStore('PostgresStore', postgresFixture);
});
