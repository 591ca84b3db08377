import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The database the PostgreSQL tests use: RECEPTION_TEST_DATABASE_URL, else the machine's local one. */
export function testDatabaseUrl(): string {
  return process.env.RECEPTION_TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
}

let reachable: Promise<string | undefined> | undefined;

/**
 * Undefined when PostgreSQL answers; otherwise why not. Under CI=true an
 * unreachable database is an error, never a skip.
 */
export function postgresUnavailable(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** Skip (locally, loudly) or fail (CI) when PostgreSQL is not there; returns true to run. */
export async function requirePostgres(suite: string): Promise<boolean> {
  const problem = await postgresUnavailable();
  if (problem === undefined) return true;
  const message = `PostgreSQL at ${testDatabaseUrl()} is not reachable (${problem}).`;
  if (process.env.CI === 'true') throw new Error(`${message} CI needs it for ${suite}.`);
  process.stderr.write(
    `\n!!! SKIPPING ${suite}: ${message}\n!!! Start PostgreSQL or set RECEPTION_TEST_DATABASE_URL=postgres://… to run it.\n\n`,
  );
  return false;
}

/** A fresh schema name for one test; `dropSchema` removes it. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

/**
 * Drops a test's schema. A server the test started may still be in a
 * transaction on it (killed a moment ago, or its search index mid-step):
 * PostgreSQL may then end the DROP as a deadlock, and it is tried again.
 */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        return;
      } catch (error) {
        if ((error as { code?: unknown }).code !== '40P01' || attempt === 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  } finally {
    await client.end();
  }
}
