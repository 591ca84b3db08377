import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from './driver.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The `.sql` files beside this module, ordered by their leading number. */
export function loadMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d+-[\w-]+\.sql$/.test(file))
    .map((file) => ({
      version: Number.parseInt(file, 10),
      name: file,
      sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Applies the migrations not yet applied, each in its own IMMEDIATE
 * transaction, so that two processes opening the same file at once apply
 * each migration exactly once.
 */
export function migrate(db: Database): number {
  db.exec(`CREATE TABLE IF NOT EXISTS reception_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const applied = db.prepare<[number], { version: number }>('SELECT version FROM reception_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO reception_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  let count = 0;
  for (const migration of loadMigrations()) {
    const apply = db.transaction(() => {
      if (applied.get(migration.version) !== undefined) return;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Date.now());
      count++;
    });
    apply.immediate();
  }
  return count;
}
