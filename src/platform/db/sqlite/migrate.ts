import { loadMigrations } from '../migrations.js';
import type { Database } from './driver.js';

/** The `.sql` files beside this module (copied beside the compiled one by `scripts/copy-assets.mjs`). */
export const SQLITE_MIGRATIONS = new URL('./migrations/', import.meta.url);

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
  for (const migration of loadMigrations(SQLITE_MIGRATIONS)) {
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
