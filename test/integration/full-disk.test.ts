import { execFileSync } from 'node:child_process';
import { closeSync, openSync, ftruncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { READY_MIN_ROOM_BYTES, SqliteStore } from '../../src/inbox/sqlite-store.js';
import { startAppOn, type RunningApp } from '../helpers/app.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * A file system that is really full (issue 16, item 4): a small tmpfs of
 * its own, filled to the last block. SQLite's `max_page_count` (the
 * technique of storage-unavailable.test.ts) makes the database file unable
 * to grow, but a DELETE never grows it: only a real full disk, where the
 * WAL cannot grow, shows what a DELETE answers then. Mounting needs root
 * (CAP_SYS_ADMIN); elsewhere this file is skipped, and says so.
 */

const mountPoint = tempDir('reception-full-disk-');
let mounted = false;
// Room for the inbox to be ready once the pad is gone (READY_MIN_ROOM_BYTES), and some.
const TMPFS_MIB = READY_MIN_ROOM_BYTES / (1024 * 1024) + 64;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MIB}m,mode=0700`, 'tmpfs', mountPoint.path], { stdio: 'pipe' });
  mounted = true;
} catch (error) {
  process.stderr.write(
    `\n!!! SKIPPING the full-disk tests: cannot mount a tmpfs (${String(error).split('\n')[0]}); they need root.\n\n`,
  );
}

const running: Array<RunningApp<SqliteStore>> = [];
const PAD = join(mountPoint.path, 'pad');

afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

afterAll(() => {
  if (mounted) {
    try {
      execFileSync('umount', [mountPoint.path], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', mountPoint.path], { stdio: 'pipe' });
    }
  }
  mountPoint.remove();
});

/** Writes to a pad file until the file system has no block left; answers the pad's size. */
function fillToTheLastBlock(): number {
  const fd = openSync(PAD, 'a');
  let size = 0;
  try {
    for (const chunk of [1 << 20, 1 << 16, 1 << 12, 1 << 9, 1]) {
      const bytes = Buffer.alloc(chunk, 0x61);
      for (;;) {
        try {
          size += writeSync(fd, bytes);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return size;
}

/** Gives `bytes` back to the file system by cutting the pad. */
function freeUp(padSize: number, bytes: number): void {
  const fd = openSync(PAD, 'r+');
  try {
    ftruncateSync(fd, Math.max(0, padSize - bytes));
  } finally {
    closeSync(fd);
  }
}

function post(server: RunningApp<SqliteStore>, body: object): Promise<Response> {
  return fetch(`${server.url}/api/webhook/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function expectStorageUnavailable(answer: Response): Promise<void> {
  const text = await answer.text();
  expect(answer.status, text).toBe(503);
  expect(answer.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(JSON.parse(text)).toMatchObject({ status: 503, code: 'storage_unavailable' });
  expect(text).not.toMatch(/SQLITE|sqlite|\/tmp/);
}

describe.runIf(mounted)('on a file system that is full', () => {
  it('answers /readyz 503, also after a restart, and DELETE 503 storage_unavailable with Retry-After, and recovers once there is room', async () => {
    const file = join(mountPoint.path, 'reception.sqlite');
    const server = await startAppOn(new SqliteStore({ file, durability: 'full' }));
    running.push(server);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(((await (await post(server, { i })).json()) as { id: string }).id);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    // An empty WAL, so that any write must grow a file; then not one block left.
    server.store.db.pragma('wal_checkpoint(TRUNCATE)');
    const padSize = fillToTheLastBlock();

    await expectStorageUnavailable(await post(server, { refused: true }));
    await expectStorageUnavailable(
      await fetch(`${server.url}/api/deliveries/${ids[0] ?? ''}`, { method: 'DELETE', headers: server.auth }),
    );
    // Waits out the readiness answer of before the disk filled (at most a second old).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const full = await fetch(`${server.url}/readyz`);
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect((await fetch(`${server.url}/api/deliveries/${ids[0] ?? ''}`, { headers: server.auth })).status).toBe(200);

    // A restart on the same disk: enough room to open the file (its -wal and -shm), far too little to take webhooks.
    running.splice(0);
    await server.close();
    freeUp(padSize, 256 * 1024);
    const restarted = await startAppOn(new SqliteStore({ file, durability: 'full' }));
    running.push(restarted);
    const first = await fetch(`${restarted.url}/readyz`);
    expect(first.status).toBe(503);

    // Room again: ready, and writes work.
    freeUp(padSize, padSize);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await fetch(`${restarted.url}/readyz`)).status).toBe(200);
    expect(
      (await fetch(`${restarted.url}/api/deliveries/${ids[0] ?? ''}`, { method: 'DELETE', headers: restarted.auth })).status,
    ).toBe(204);
    expect((await post(restarted, { after: true })).status).toBe(200);
  });
});
