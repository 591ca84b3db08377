import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/platform/observe/metrics.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { PostgresStore } from '../../src/inbox/postgres-store.js';
import { Database } from '../../src/platform/db/sqlite/driver.js';
import { startAppOnKind, type RunningApp, type StoreKind } from '../helpers/app.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { send, sendUntilClose } from '../helpers/exchange.js';
import { allRefusals, newestRefusal } from './refusal-support.js';

const kinds: StoreKind[] = ['sqlite'];
if (await requirePostgres('the refusal writer tests on PostgreSQL')) kinds.push('postgres');

const running: Array<RunningApp<InboxDatabase>> = [];
const releases: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const release of releases.splice(0)) await release();
  for (const server of running.splice(0)) await server.close();
});

/**
 * Makes the refusals table alone unavailable to the app's store until
 * `release()`, as a stuck migration, a backup's lock or an operator would:
 * SQLite, by renaming the table from another connection; PostgreSQL, by an
 * exclusive lock on it held in another session (the store waits its lock
 * timeout, then gives up). The inbox itself stays writable.
 */
async function blockRefusals(server: RunningApp<InboxDatabase>, kind: StoreKind): Promise<() => Promise<void>> {
  if (kind === 'sqlite') {
    const db = new Database(join(server.dataDir, 'reception.sqlite'));
    db.exec('ALTER TABLE refusals RENAME TO refusals_away');
    const release = async (): Promise<void> => {
      if (!db.open) return;
      db.exec('ALTER TABLE refusals_away RENAME TO refusals');
      db.close();
    };
    releases.push(release);
    return release;
  }
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  await client.query(`BEGIN; LOCK TABLE ${(server.store as PostgresStore).schema}.refusals IN ACCESS EXCLUSIVE MODE`);
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await client.query('ROLLBACK');
    await client.end();
  };
  releases.push(release);
  return release;
}

const json = (body: string): Record<string, string> => ({
  'content-type': 'application/json',
  'content-length': String(Buffer.byteLength(body)),
});

async function counter(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([key, label]) => v.labels[key] === label));
  return value?.value ?? 0;
}

describe.each(kinds)('the refusal writer on %s', (kind) => {
  it('rides out a refusals table it cannot write: deliveries go on unhindered, and the refusals held are written once it can', async () => {
    const metrics = new Metrics();
    const { logger, lines } = capturingLogger();
    const server = await startAppOnKind(kind, { metrics, logger, refusalWriter: { intervalMs: 10, retryMs: 100 } });
    running.push(server);
    const release = await blockRefusals(server, kind);

    const refused: string[] = [];
    const delivered: number[] = [];
    for (let i = 0; i < 40; i++) {
      const bad = `text ${i}`;
      refused.push(bad);
      const answer = await send(server, { path: '/api/webhook/outage', headers: { 'content-type': 'text/plain' }, body: bad });
      expect(answer.status).toBe(415);
      const started = performance.now();
      const ok = await send(server, { path: '/api/webhook/outage', headers: json(`{"i":${i}}`), body: `{"i":${i}}` });
      delivered.push(performance.now() - started);
      expect(ok.status).toBe(200);
    }
    // The writer has tried, and failed, in the meantime.
    await new Promise((resolve) => setTimeout(resolve, kind === 'postgres' ? 2500 : 300));
    expect(lines.some((l) => l.msg === 'refusals could not be written; they wait in memory and are tried again')).toBe(true);
    expect(server.app.refusals.buffered).toBe(40);
    // No delivery waited on the refusals: well under the store's lock timeout (PostgreSQL: 2 s) each.
    expect(Math.max(...delivered)).toBeLessThan(500);

    await release();
    await newestRefusal(server);
    const kept = await allRefusals(server, 'outage');
    expect(kept.map((r) => r.bodyPreview)).toEqual([...refused].reverse());
    expect(await counter(metrics, 'reception_refusals_kept_total', { code: 'unsupported_media_type' })).toBe(40);
    expect(await counter(metrics, 'reception_refusals_dropped_total', { reason: 'buffer_full' })).toBe(0);
    expect(lines.some((l) => l.msg === 'refusals are written again')).toBe(true);
    const deliveries = (await (await fetch(`${server.url}/api/deliveries?source=outage`, { headers: server.auth })).json()) as {
      items: unknown[];
    };
    expect(deliveries.items).toHaveLength(40);
  });

  it('holds at most maxBuffered refusals while it cannot write, and counts the rest as dropped', async () => {
    const metrics = new Metrics();
    const server = await startAppOnKind(kind, { metrics, refusalWriter: { intervalMs: 10, retryMs: 100, maxBuffered: 10 } });
    running.push(server);
    const release = await blockRefusals(server, kind);
    for (let i = 0; i < 30; i++) {
      await send(server, { path: '/api/webhook/held', headers: { 'content-type': 'text/plain' }, body: `n=${i}` });
    }
    expect(server.app.refusals.buffered).toBe(10);
    expect(await counter(metrics, 'reception_refusals_dropped_total', { reason: 'buffer_full' })).toBe(20);
    await release();
    await newestRefusal(server);
    expect((await allRefusals(server, 'held')).map((r) => r.bodyPreview)).toEqual(
      Array.from({ length: 10 }, (_, i) => `n=${9 - i}`),
    );
  });

  it('keeps a 503 given because too many bodies were arriving, with what had come of the body', async () => {
    const server = await startAppOnKind(kind, { incomingMaxBytes: 1024, refusalWriter: { intervalMs: 10 } });
    running.push(server);
    // One sender holds 1000 bytes of its body; the next body finds the bound spent.
    const holding = sendUntilClose(
      server,
      `POST /api/webhook/busy HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{"a":"${'x'.repeat(994)}`,
      1500,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const body = `{"b":"${'y'.repeat(600)}"}`;
    const answer = await send(server, { path: '/api/webhook/busy', headers: json(body), body });
    expect(answer.status).toBe(503);
    const refusal = await newestRefusal(server);
    expect(refusal).toMatchObject({ status: 503, code: 'storage_unavailable', source: 'busy', size: body.length });
    expect(body.startsWith(refusal.bodyPreview)).toBe(true);
    expect(refusal.bodyPreview.length).toBeGreaterThan(0);
    await holding;
  });
});

describe('a store that cannot take deliveries (SQLite locked by another process)', () => {
  it('answers 503 storage_unavailable, which is not kept as a refusal; refusals held meanwhile are written after', async () => {
    const server = await startAppOnKind('sqlite', { refusalWriter: { intervalMs: 10, retryMs: 100 } });
    running.push(server);
    const locker = new Database(join(server.dataDir, 'reception.sqlite'));
    locker.exec('BEGIN EXCLUSIVE');
    releases.push(async () => {
      if (locker.inTransaction) locker.exec('ROLLBACK');
      locker.close();
    });
    const down = await send(server, { path: '/api/webhook/locked', headers: json('{}'), body: '{}' });
    expect(down.status).toBe(503);
    expect((JSON.parse(down.text) as { code: string }).code).toBe('storage_unavailable');
    const bad = await send(server, { path: '/api/webhook/locked', headers: { 'content-type': 'text/plain' }, body: 'no' });
    expect(bad.status).toBe(415);
    // A write of refusals fails at once on the lock: it never holds the event loop for the busy timeout.
    const started = performance.now();
    await server.app.refusals.flush();
    expect(performance.now() - started).toBeLessThan(200);
    expect(server.app.refusals.buffered).toBe(1);

    locker.exec('ROLLBACK');
    const refusal = await newestRefusal(server);
    expect(refusal.code).toBe('unsupported_media_type');
    expect((await allRefusals(server)).map((r) => r.code)).toEqual(['unsupported_media_type']);
    const up = await send(server, { path: '/api/webhook/locked', headers: json('{}'), body: '{}' });
    expect(up.status).toBe(200);
  });
});
