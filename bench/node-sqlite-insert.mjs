// Node's built-in node:sqlite (Node 22.13 and later) against better-sqlite3
// on the store's insert path: the deliveries table of migration 000001, WAL,
// the same synchronous setting and checkpoint size as SqliteStore, and
// group commits of 50 deliveries of 1 KiB. Run with Node 22.13 or later:
//
//   node bench/node-sqlite-insert.mjs [deliveries] [rounds]
//
// (docs/node-sqlite.md has the numbers and what follows from them.)
import { Buffer } from 'node:buffer';
import console from 'node:console';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';

const require = createRequire(import.meta.url);
const TOTAL = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const BATCH = 50;
const MIGRATION = readFileSync(new URL('../src/platform/db/sqlite/migrations/000001-deliveries.sql', import.meta.url), 'utf8');
const RAW = Buffer.from(JSON.stringify({ event: 'push', pad: 'x'.repeat(990) }));
const HEADERS = JSON.stringify([
  ['Host', 'hooks.example.com'],
  ['Content-Type', 'application/json'],
  ['User-Agent', 'bench'],
]);
const INSERT = `INSERT INTO deliveries (id, source, received_at, method, query, content_type,
  remote_address, headers, raw, verification_status, verification_scheme, verification_reason, dedup_key)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (source, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING`;

/** Both drivers behind the same few calls: exec, an insert statement, and a transaction around a batch. */
const DRIVERS = {
  'better-sqlite3': (file) => {
    const Database = require(Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3');
    const db = new Database(file);
    const batcher = () => {
      const insert = db.prepare(INSERT);
      return db.transaction((rows) => {
        for (const row of rows) insert.run(...row);
      });
    };
    const version = () => db.prepare('SELECT sqlite_version() AS v').get().v;
    const level = () => db.pragma('synchronous', { simple: true });
    return { exec: (sql) => db.exec(sql), pragma: (p) => db.pragma(p), batcher, version, level, close: () => db.close() };
  },
  'node:sqlite': (file) => {
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(file);
    const batcher = () => {
      const insert = db.prepare(INSERT);
      return (rows) => {
        db.exec('BEGIN');
        try {
          for (const row of rows) insert.run(...row);
          db.exec('COMMIT');
        } catch (error) {
          db.exec('ROLLBACK');
          throw error;
        }
      };
    };
    const version = () => db.prepare('SELECT sqlite_version() AS v').get().v;
    const level = () => db.prepare('PRAGMA synchronous').get().synchronous;
    return {
      exec: (sql) => db.exec(sql),
      pragma: (p) => db.exec(`PRAGMA ${p}`),
      batcher,
      version,
      level,
      close: () => db.close(),
    };
  },
};

function sqliteVersion(name) {
  const d = DRIVERS[name](':memory:');
  try {
    return d.version();
  } finally {
    d.close();
  }
}

function round(name, synchronous) {
  const dir = mkdtempSync(join(tmpdir(), 'node-sqlite-bench-'));
  try {
    const d = DRIVERS[name](join(dir, 'reception.sqlite'));
    d.pragma('busy_timeout = 1000');
    d.pragma('journal_mode = WAL');
    d.pragma(`synchronous = ${synchronous}`);
    d.pragma('wal_autocheckpoint = 250');
    d.exec(MIGRATION);
    const level = d.level();
    if (level !== { FULL: 2, NORMAL: 1 }[synchronous]) throw new Error(`${name}: synchronous is ${level}, not ${synchronous}`);
    const batch = d.batcher();
    const started = process.hrtime.bigint();
    let n = 0;
    while (n < TOTAL) {
      const rows = [];
      for (let i = 0; i < BATCH && n < TOTAL; i++, n++) {
        rows.push([
          `id-${n}`,
          n % 2 === 0 ? 'github' : 'stripe',
          Date.now(),
          'POST',
          '',
          'application/json',
          '127.0.0.1',
          HEADERS,
          RAW,
          'none',
          null,
          null,
          null,
        ]);
      }
      batch(rows);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    d.close();
    return TOTAL / seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `Node ${process.version}; ${TOTAL} deliveries of ${RAW.length} B in transactions of ${BATCH}, ${ROUNDS} rounds, drivers alternating`,
);
for (const name of Object.keys(DRIVERS)) console.log(`  ${name}: SQLite ${sqliteVersion(name)}`);
for (const synchronous of ['FULL', 'NORMAL']) {
  const results = Object.fromEntries(Object.keys(DRIVERS).map((name) => [name, []]));
  for (let r = 0; r < ROUNDS; r++) for (const name of Object.keys(DRIVERS)) results[name].push(round(name, synchronous));
  for (const [name, rates] of Object.entries(results)) {
    console.log(
      `synchronous=${synchronous}  ${name.padEnd(15)} median ${Math.round(median(rates))}/s  (rounds: ${rates.map((r) => Math.round(r)).join(', ')})`,
    );
  }
}
