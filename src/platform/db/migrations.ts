import { readdirSync, readFileSync } from 'node:fs';

/** One `.sql` file of a backend's `migrations/` folder. */
export interface Migration {
  /** The file's leading number: the order it is applied in, and its key in `reception_migrations`. */
  version: number;
  name: string;
  sql: string;
}

/** A migration file's name: a number, a dash, words (`001-deliveries.sql`). */
const MIGRATION_FILE = /^\d+-[\w-]+\.sql$/;

/**
 * The migrations of one backend: the `.sql` files in `folder` (a `file:`
 * URL ending in `/`), ordered by their leading number. Each backend applies
 * them its own way (SQLite: IMMEDIATE transactions; PostgreSQL: under an
 * advisory lock).
 */
export function loadMigrations(folder: URL): Migration[] {
  return readdirSync(folder)
    .filter((file) => MIGRATION_FILE.test(file))
    .map((file) => ({ version: Number.parseInt(file, 10), name: file, sql: readFileSync(new URL(file, folder), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}
