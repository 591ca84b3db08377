import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Database } from './driver.js';
import type { Durability } from '../store-errors.js';

/** What opening a connection to an inbox's SQLite file needs. */
export interface SqliteOpenOptions {
  file: string;
  durability: Durability;
  /** How long a write waits for a lock held by another connection, in ms. */
  busyTimeoutMs?: number;
}

/**
 * WAL pages after which a commit also checkpoints (SQLite's default is
 * 1,000), when checkpoints are not on their own thread (`checkpointThread`;
 * the server's are). The checkpoint runs inside the commit, on the event loop, and was
 * the longest stall under load: with 250, each copies at most a quarter as
 * many pages, and the bench's p99 fell from 11-15 ms to 7-12 ms in
 * back-to-back runs at about the same throughput (bench/RESULTS.md). It
 * also keeps the WAL file near 1 MiB.
 */
export const WAL_CHECKPOINT_PAGES = 250;

/**
 * Opens a connection with the pragmas every connection of the inbox needs.
 * A new inbox is readable by this user only (its directory 0700, its file
 * 0600): it holds whatever senders sent, secrets in payloads included.
 * SQLite gives the `-wal` and `-shm` files the database file's mode.
 */
export function openDatabase(options: SqliteOpenOptions): Database {
  mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  closeSync(openSync(options.file, 'a', 0o600));
  const db = new Database(options.file);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 1000}`);
  switchToWal(db);
  // better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1 (NORMAL):
  // set the level explicitly on every connection.
  db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  return db;
}

/**
 * A warning for an inbox file that other users of the machine may read
 * (made by an older version, or copied): undefined when only its owner can.
 */
export function permissionWarning(file: string): string | undefined {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  return (
    `${file} can be read by other users of this machine (mode ${mode.toString(8).padStart(4, '0')}), and it holds every payload: ` +
    `chmod 600 ${file}* and chmod 700 on its directory, unless that is meant`
  );
}

/** How long opening waits for another connection that is switching a new file to WAL at the same moment. */
const WAL_SWITCH_WAIT_MS = 5000;

/**
 * `journal_mode = WAL`. On a new file that another connection is opening at
 * the same moment, SQLite answers SQLITE_BUSY at once, without waiting in
 * the busy handler: try again for a while.
 */
function switchToWal(db: Database): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}
