import { createHash } from 'node:crypto';
import pg from 'pg';

/** The database of the PostgreSQL case: RECEPTION_BENCH_DATABASE_URL, else the machine's local one. */
export const BENCH_DATABASE_URL = process.env.RECEPTION_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The schema of one case's run, named after its fresh directory so that the cleanup finds it again. */
export function benchSchema(dir: string): string {
  return `bench_${createHash('sha256').update(dir).digest('hex').slice(0, 16)}`;
}

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Undefined when the database answers; otherwise why the case cannot run. */
export async function postgresUnavailable(): Promise<string | undefined> {
  try {
    await withClient((client) => client.query('SELECT 1'));
    return undefined;
  } catch (error) {
    return (
      `PostgreSQL at ${BENCH_DATABASE_URL} is not reachable (${error instanceof Error ? error.message : String(error)}); ` +
      'set RECEPTION_BENCH_DATABASE_URL'
    );
  }
}

/** Drops the case's schema and everything in it. */
export async function dropBenchSchema(dir: string): Promise<void> {
  await withClient((client) => client.query(`DROP SCHEMA IF EXISTS ${benchSchema(dir)} CASCADE`));
}
