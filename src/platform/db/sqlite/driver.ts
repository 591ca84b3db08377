import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/** The package of the build that works on this Node (see `Database`). */
const PACKAGE = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

/**
 * better-sqlite3, in the build that works on this Node:
 *
 * - Node 20: better-sqlite3 12, compiled from source at install
 *   (`.prebuild-installrc` tells its installer to download nothing).
 *   The 13 line needs Node 22; its build crashes on 20.
 * - Node 22 and later: better-sqlite3 13 (`better-sqlite3-napi`, an npm
 *   alias), built on Node-API, with its builds inside the npm package.
 *   Compiled against Node 24.19's headers or later, the 12 line aborts the
 *   process (`RemoveEnvironmentCleanupHook: Assertion failed: (env) !=
 *   nullptr`) whenever a garbage-collected statement is finalized outside
 *   JavaScript, as on an idle GC (nodejs/node#65446).
 *
 * Both have the same API.
 */
export const Database = require(PACKAGE) as typeof BetterSqlite3;

export type Database = BetterSqlite3.Database;

/** Where the driver's module is, for a worker thread that opens its own connection. */
export const DRIVER_PATH = require.resolve(PACKAGE);

/** The driver in use, for reports: `better-sqlite3 12.11.1 (SQLite 3.53.2)`. */
export function describeDriver(): string {
  const entry = DRIVER_PATH;
  let version = '?';
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? '?';
    break;
  }
  const db = new Database(':memory:');
  try {
    const sqlite = db.prepare<[], { v: string }>('SELECT sqlite_version() AS v').get()?.v ?? '?';
    return `better-sqlite3 ${version} (SQLite ${sqlite})`;
  } finally {
    db.close();
  }
}
