import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/platform/db/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/platform/db/postgres/migrate.js';
import { SQLITE_MIGRATIONS } from '../../src/platform/db/sqlite/migrate.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('loadMigrations', () => {
  const dirs: Array<{ remove: () => void }> = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove();
  });

  it('reads the numbered .sql files of a folder in numeric order and nothing else', () => {
    const dir = tempDir();
    dirs.push(dir);
    for (const [file, sql] of [
      ['10-later.sql', 'B'],
      ['2-first.sql', 'A'],
      ['notes.md', 'x'],
      ['3-draft.sql.bak', 'x'],
      ['x-1.sql', 'x'],
    ]) {
      writeFileSync(join(dir.path, file ?? ''), sql ?? '');
    }
    expect(loadMigrations(pathToFileURL(`${dir.path}/`))).toEqual([
      { version: 2, name: '2-first.sql', sql: 'A' },
      { version: 10, name: '10-later.sql', sql: 'B' },
    ]);
  });

  it("finds each backend's migrations, each number once (it is the key in reception_migrations)", () => {
    for (const folder of [SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS]) {
      const versions = loadMigrations(folder).map((m) => m.version);
      expect(versions.length).toBeGreaterThan(0);
      expect(new Set(versions).size).toBe(versions.length);
    }
  });
});
