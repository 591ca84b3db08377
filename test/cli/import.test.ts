import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredDelivery } from '../../src/deliveries/delivery-store.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { killAllClis, runCli } from '../helpers/cli.js';
import { sendWebhook } from '../helpers/cli-send.js';

/**
 * `reception export --raw` then `reception import`: an inbox moved from
 * SQLite to PostgreSQL (and to another SQLite file) keeps every delivery's
 * id, receivedAt, order and bytes.
 */

let server: RunningApp;
let dir: { path: string; remove: () => void };
let exported: string;

/** Bodies that any re-serialization would change, and bytes that are not UTF-8 text. */
const BODIES: Array<[string, Buffer, Array<[string, string]>]> = [
  [
    'github',
    Buffer.from('{ "z": 1,\n  "a": 1.50, "big": 12345678901234567890, "a": 2 }'),
    [['Content-Type', 'application/json']],
  ],
  ['twilio', Buffer.from('b=2&a=1&a=%E2%98%83&plus=a+b'), [['Content-Type', 'application/x-www-form-urlencoded']]],
  [
    'github',
    Buffer.from('{"latin1":"caf\u00e9","x":"\\u0000"}'),
    [
      ['Content-Type', 'application/json'],
      ['X-Order', 'b'],
      ['x-order', 'a'],
    ],
  ],
  [
    'stripe',
    Buffer.from('{"n":4}'),
    [
      ['Content-Type', 'application/json; charset=utf-8'],
      ['Authorization', 'Bearer secret'],
    ],
  ],
  ['stripe', Buffer.from('{"n":5}'), [['Content-Type', 'application/json']]],
  // Typed as received (issue 28: import dropped every eventType): by the X-GitHub-Event header and action, by the body's type.
  [
    'github',
    Buffer.from('{"action":"opened","number":7}'),
    [
      ['Content-Type', 'application/json'],
      ['X-GitHub-Event', 'pull_request'],
    ],
  ],
  ['stripe', Buffer.from('{"type":"invoice.paid","id":"evt_1"}'), [['Content-Type', 'application/json']]],
];

beforeAll(async () => {
  server = await startApp();
  dir = tempDir('reception-import-');
  const ids: string[] = [];
  for (const [source, body, headers] of BODIES) {
    ids.push((await sendWebhook(server.url, `/api/webhook/${source}?q=${ids.length}`, body, headers)).id);
  }
  // A gap in the seqs: the import keeps the order, not the numbers.
  await fetch(`${server.url}/api/deliveries/${ids[1] ?? ''}`, { method: 'DELETE', headers: server.auth });
  const result = await runCli(['export', '--raw', '--page-size', '2'], {
    RECEPTION_URL: server.url,
    RECEPTION_TOKEN: server.token,
  });
  expect(result.code).toBe(0);
  exported = join(dir.path, 'inbox.ndjson');
  writeFileSync(exported, result.stdout);
}, 60_000);

afterAll(async () => {
  killAllClis();
  await server.close();
  dir.remove();
});

/** What must survive the move, oldest first. */
function essence(deliveries: StoredDelivery[]): unknown[] {
  return deliveries.map((d) => ({
    id: d.id,
    source: d.source,
    receivedAt: d.receivedAt,
    method: d.method,
    query: d.query,
    contentType: d.contentType,
    remoteAddress: d.remoteAddress,
    headers: d.headers,
    raw: d.raw.toString('base64'),
    verification: d.verification,
    eventType: d.eventType,
  }));
}

describe('export --raw', { timeout: 60_000 }, () => {
  it('writes the body bytes of each delivery, base64, beside its JSON', async () => {
    const lines = readFileSync(exported, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(6);
    const stored = await server.store.readAfter(0, 100);
    const byId = new Map(stored.map((d) => [d.id, d]));
    for (const line of lines) {
      const delivery = JSON.parse(line) as { id: string; raw: string; size: number };
      expect(Buffer.from(delivery.raw, 'base64').equals(byId.get(delivery.id)?.raw ?? Buffer.alloc(0))).toBe(true);
      expect(Buffer.from(delivery.raw, 'base64')).toHaveLength(delivery.size);
    }
  });
});

describe('reception import', { timeout: 60_000 }, () => {
  it('moves an inbox from SQLite to PostgreSQL keeping ids, receivedAt, order and bytes; a second run adds nothing', async () => {
    if (!(await requirePostgres('reception import into PostgreSQL'))) return;
    const schema = freshSchema();
    try {
      const env = { RECEPTION_DATABASE_URL: testDatabaseUrl() };
      const first = await runCli(['import', exported, '--database-schema', schema], env);
      expect(first.stderr).toContain(`import: 6 deliveries stored in PostgreSQL`);
      expect(first.code).toBe(0);
      const again = await runCli(['import', exported, '--database-schema', schema], env);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('import: 0 deliveries stored in PostgreSQL');
      expect(again.stderr).toContain('6 already there, left as they were');

      const target = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      try {
        const moved = await target.readAfter(0, 100);
        expect(essence(moved)).toEqual(essence(await server.store.readAfter(0, 100)));
        expect((await target.sources()).map((s) => [s.source, s.count])).toEqual([
          ['github', 3],
          ['stripe', 3],
        ]);
      } finally {
        await target.close();
      }
    } finally {
      await dropSchema(schema);
    }
  });

  it('loads the same file into another SQLite inbox (--data)', async () => {
    const data = join(dir.path, 'other-data');
    const result = await runCli(['import', exported, '--data', data]);
    expect(result.code).toBe(0);
    const target = new SqliteStore({ file: join(data, 'reception.sqlite'), durability: 'full' });
    try {
      expect(essence(await target.readAfter(0, 100))).toEqual(essence(await server.store.readAfter(0, 100)));
    } finally {
      await target.close();
    }
  });

  it('keeps each delivery its event type, and gives one to a line without it as the receiver would, on both stores', async () => {
    const source = await server.store.readAfter(0, 100);
    expect(source.map((d) => d.eventType).filter((type) => type !== null)).toEqual(['pull_request.opened', 'invoice.paid']);
    // A line written without "eventType" (a file from before it was exported), one with a scheme the server verified by.
    const lines = readFileSync(exported, 'utf8').trimEnd().split('\n');
    const untyped = lines.map((line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      delete record.eventType;
      if (record.source === 'stripe') record.verification = { status: 'verified', scheme: 'stripe' };
      return JSON.stringify(record);
    });
    const file = join(dir.path, 'untyped.ndjson');
    writeFileSync(file, `${untyped.join('\n')}\n`);
    const types = (deliveries: StoredDelivery[]): Array<[string, string | null]> =>
      deliveries.map((d) => [d.source, d.eventType]);
    const expected = source.map((d): [string, string | null] => [d.source, d.eventType]);
    expect(expected.filter(([, type]) => type !== null)).toEqual([
      ['github', 'pull_request.opened'],
      ['stripe', 'invoice.paid'],
    ]);

    const data = join(dir.path, 'untyped-data');
    expect((await runCli(['import', file, '--data', data])).code).toBe(0);
    const sqlite = new SqliteStore({ file: join(data, 'reception.sqlite'), durability: 'full' });
    try {
      expect(types(await sqlite.readAfter(0, 100))).toEqual(expected);
      expect((await sqlite.eventTypes({ source: 'stripe', limit: 10 })).map((t) => t.eventType)).toContain('invoice.paid');
    } finally {
      await sqlite.close();
    }
    if (!(await requirePostgres('reception import into PostgreSQL'))) return;
    const schema = freshSchema();
    try {
      const env = { RECEPTION_DATABASE_URL: testDatabaseUrl() };
      expect((await runCli(['import', file, '--database-schema', schema], env)).code).toBe(0);
      const postgres = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      try {
        expect(types(await postgres.readAfter(0, 100))).toEqual(expected);
        expect((await postgres.eventTypes({ source: 'github', limit: 10 })).map((t) => t.eventType)).toContain(
          'pull_request.opened',
        );
      } finally {
        await postgres.close();
      }
    } finally {
      await dropSchema(schema);
    }
  });

  it('checks every line first: a bad one stops it with the line named, and nothing is stored', async () => {
    const lines = readFileSync(exported, 'utf8').trimEnd().split('\n');
    const cases: Array<[string, string[], string]> = [
      [
        'no-raw',
        [lines[0] ?? '', JSON.stringify({ ...JSON.parse(lines[1] ?? '{}'), raw: undefined })],
        'line 2: it has no "raw"',
      ],
      ['not-json', [lines[0] ?? '', '{"id": '], 'line 2: it is not JSON'],
      [
        'bad-source',
        [JSON.stringify({ ...JSON.parse(lines[0] ?? '{}'), source: 'a/b' })],
        'line 1: "source" is not a valid source name',
      ],
      ['bad-size', [JSON.stringify({ ...JSON.parse(lines[0] ?? '{}'), size: 1 })], 'line 1: "raw" holds'],
      ['twice', [lines[0] ?? '', lines[0] ?? ''], 'line 2: the id'],
    ];
    for (const [name, content, problem] of cases) {
      const file = join(dir.path, `${name}.ndjson`);
      writeFileSync(file, `${content.join('\n')}\n`);
      const data = join(dir.path, `data-${name}`);
      const result = await runCli(['import', file, '--data', data]);
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toContain(`reception: ${problem}`);
      expect(result.stderr, name).toContain('nothing was imported');
      // Checked before the store is opened: not even the data directory was made.
      expect(existsSync(data), name).toBe(false);
    }
    const missing = await runCli(['import']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('which file?');
  });
});
