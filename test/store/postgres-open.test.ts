import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeServer, PostgresStore } from '../../src/inbox/postgres-store.js';
import { freePort } from '../helpers/free-port.js';
import { freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';

/** What Reception says when it cannot open its PostgreSQL store at start (README "Errors say what to do next"). */
describe('opening the PostgreSQL store', () => {
  it('names the server it could not reach, without the password, and what to check', async () => {
    const port = await freePort();
    const error = await PostgresStore.open({ connectionString: `postgres://reception:s3cret-pass@127.0.0.1:${port}/inbox` }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(`PostgreSQL at reception@127.0.0.1:${port}/inbox cannot be reached`);
    expect(message).toContain('ECONNREFUSED');
    expect(message).toContain('RECEPTION_DATABASE_URL');
    expect(message).not.toContain('s3cret-pass');
  });

  it('describes a connection string by user, host, port and database only', () => {
    expect(describeServer('postgres://u:pw@db.example:5433/reception?sslmode=require')).toBe('u@db.example:5433/reception');
    expect(describeServer('postgres://db.example/reception')).toBe('db.example/reception');
    expect(describeServer('not a url')).toBe('(the server in RECEPTION_DATABASE_URL)');
  });
});

describe('opening the PostgreSQL store as a user without the right to create tables', async () => {
  const run = await requirePostgres('the PostgreSQL start-up error test');
  const role = `t_norights_${randomBytes(4).toString('hex')}`;
  const admin = (): pg.Client => new pg.Client({ connectionString: testDatabaseUrl() });

  beforeAll(async () => {
    if (!run) return;
    const client = admin();
    await client.connect();
    try {
      await client.query(`CREATE ROLE ${role} LOGIN`);
    } finally {
      await client.end();
    }
  });
  afterAll(async () => {
    if (!run) return;
    const client = admin();
    await client.connect();
    try {
      await client.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await client.end();
    }
  });

  it.runIf(run)('says which schema it could not create and what the user needs', async () => {
    const url = new URL(testDatabaseUrl());
    url.username = role;
    url.password = '';
    const schema = freshSchema();
    const error = await PostgresStore.open({ connectionString: url.toString(), schema }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(`the tables in schema "${schema}" could not be created`);
    expect(message).toContain('42501'); // insufficient_privilege
    expect(message).toContain('needs the right to create');
  });
});
