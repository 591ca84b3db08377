import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';

const STORE = fileURLToPath(new URL('../../dist/src/inbox/sqlite-store.js', import.meta.url));

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

// A process whose only work left is closing the store: the checkpoint thread is
// unreferenced while it runs, and must not let the process exit in the middle of close().
it('close() with a checkpoint thread finishes in a process that has nothing else to do', async () => {
  const file = join(dir.path, 'reception.sqlite');
  const script = `
    const { SqliteStore } = await import(${JSON.stringify(STORE)});
    const store = new SqliteStore({ file: ${JSON.stringify(file)}, durability: 'full', checkpointThread: true });
    await store.append([{ id: crypto.randomUUID(), source: 's', receivedAt: Date.now(), method: 'POST', query: '',
      contentType: 'application/json', remoteAddress: '127.0.0.1', headers: [], raw: Buffer.from('{}'),
      verification: { status: 'none' }, dedupKey: null }]);
    await store.close();
    console.log('closed');
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  expect(stdout.trim()).toBe('closed');
  // The committing connection closed last: it checkpointed the rest and removed the WAL.
  expect(existsSync(`${file}-wal`)).toBe(false);
});
