import type pg from 'pg';

/** How the store runs statements: one on a pooled connection, or several in one transaction. */
export interface PostgresRunner {
  execute<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}
