import type { PoolClient } from 'pg';
import { loadMigrations } from '../migrations.js';

/** The `.sql` files beside this module (copied beside the compiled one by `scripts/copy-assets.mjs`). */
export const POSTGRES_MIGRATIONS = new URL('./migrations/', import.meta.url);
/** Held while migrating, so that instances starting together migrate one at a time. */
const MIGRATION_LOCK = 7_305_162_020;

/**
 * Creates the schema and applies the migrations not yet applied, each in its
 * own transaction, under a session advisory lock: safe when several
 * instances start at once. `schema` must already be a checked identifier.
 */
export async function migrate(client: PoolClient, schema: string): Promise<number> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS reception_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const applied = new Set(
      (await client.query<{ version: number }>('SELECT version FROM reception_migrations')).rows.map((r) => r.version),
    );
    let count = 0;
    for (const migration of loadMigrations(POSTGRES_MIGRATIONS)) {
      if (applied.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO reception_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
        count++;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
    return count;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
