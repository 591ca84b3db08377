import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../src/platform/db/sqlite/checkpointer.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { describeInboxStore } from '../../src/inbox/contract/inbox-store-contract.js';
import { newDeliveries } from '../helpers/delivery-factory.js';
import { eventually } from '../helpers/eventually.js';
import { tempDir } from '../helpers/temp-dir.js';

// The whole store contract again, with checkpoints on their own thread as the server runs them.
describeInboxStore('SqliteStore with a checkpoint thread', async () => {
  const dir = tempDir();
  const store = new SqliteStore({ file: join(dir.path, 'reception.sqlite'), durability: 'full', checkpointThread: true });
  return {
    store,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});

// The WAL under a stream of appends is in the serial suite: test/serial/sqlite-checkpoint-stream.test.ts.
describe('SQLite checkpoints on their own thread', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'reception.sqlite');
  });
  afterEach(() => dir.remove());

  it('calls back when the thread cannot work, so that the store checkpoints by itself again', async () => {
    const notAFile = join(dir.path, 'a-directory');
    mkdirSync(notAFile);
    const failures: Error[] = [];
    const checkpointer = new Checkpointer(notAFile, 'full', (error) => failures.push(error));
    checkpointer.wrote();
    await eventually(() => failures.length === 1, 5000, 'no failure was reported');
    expect(String(failures[0])).toMatch(/directory|unable to open|SQLITE_CANTOPEN/i);
    await checkpointer.stop();
    expect(failures).toHaveLength(1);
  });

  it('stops without a failure being reported, idle or not', async () => {
    const failures: Error[] = [];
    const store = new SqliteStore({
      file,
      durability: 'relaxed',
      checkpointThread: true,
      onCheckpointThreadFailure: (error) => failures.push(error),
    });
    await store.append(newDeliveries(3));
    await store.close();
    expect(failures).toEqual([]);
  });
});
