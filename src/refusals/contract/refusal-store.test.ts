import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../inbox/sqlite-store.js';
import { requirePostgres } from '../../../test/helpers/postgres.js';
import { postgresFixture, sqliteFixture } from '../../../test/helpers/store-fixtures.js';
import { tempDir } from '../../../test/helpers/temp-dir.js';
import { describeRefusalStore } from './refusal-store-contract.js';
import { newRefusal } from './refusal-factory.js';

describeRefusalStore('SqliteStore', sqliteFixture);

const run = await requirePostgres('the PostgreSQL refusal store tests');

describe.runIf(run)('PostgresStore refusals', () => {
  describeRefusalStore('PostgresStore', postgresFixture);
});

describe('SqliteRefusals on a real file', () => {
  it('writes refusals without an fsync, and leaves the inbox connection at its own durability (FULL) afterwards', async () => {
    const dir = tempDir();
    const store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full' });
    try {
      const levels: number[] = [];
      // The level in force inside the refusals' transaction, read where SQLite runs the insert.
      store.db.function('reception_probe_level', (level: unknown) => {
        levels.push(Number(level));
        return 0;
      });
      store.db.exec(
        'CREATE TEMP TRIGGER probe_level AFTER INSERT ON refusals BEGIN SELECT reception_probe_level((SELECT synchronous FROM pragma_synchronous)); END',
      );
      await store.refusals.add([newRefusal()], { perSource: 10, total: 10 });
      expect(levels).toEqual([1]);
      expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
