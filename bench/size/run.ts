import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { startFlags, type StartCommand } from '../cases.js';
import { chooseLoadGenerator } from '../load.js';
import { BENCH_DATABASE_URL, benchSchema, dropBenchSchema, postgresUnavailable } from '../postgres-schema.js';
import { stopChild } from '../child-processes.js';
import { startServer } from '../server-process.js';
import type { InboxStore } from '../../src/deliveries/delivery-store.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { describeDriver } from '../../src/platform/db/sqlite/driver.js';
import { baselineMain } from './baseline.js';
import { EVENT_TYPE_SETTINGS } from './deliveries.js';
import { fill, type FillResult } from './fill.js';
import { measureIngest, type IngestRun } from './ingest.js';
import { measureReads, readCases, type ReadResult } from './reads.js';
import { sizeMarkdown } from './report.js';

/**
 * `npm run bench:size`: Reception with a large inbox (issue 19 part 7). For
 * each store: fills an inbox with BENCH_SIZE deliveries (1,000,000) of
 * several sources and event types through the store (batched, no HTTP),
 * measures the reads of the page and of clients on it (filtered lists,
 * searches, the sources and event types panels: p50 and p95), then 1 KiB
 * ingest over HTTP into that full inbox, into an empty one, and into an
 * empty one of the build before search and event types (baseline.ts), in
 * BENCH_ROUNDS rounds (3) of BENCH_SECONDS (10). Environment:
 * BENCH_SIZE_STORES (sqlite,postgres), BENCH_CONNECTIONS (50),
 * BENCH_WARMUP_SECONDS (2), BENCH_READS (40 per read), BENCH_KEEP=1,
 * BENCH_BASELINE_DIR / BENCH_BASELINE_REF (baseline.ts),
 * RECEPTION_BENCH_DATABASE_URL.
 */

function whole(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name}: expected a whole number from ${min} to ${max}`);
  return value;
}

const size = whole('BENCH_SIZE', 1_000_000, 1000, 100_000_000);
const seconds = whole('BENCH_SECONDS', 10, 1, 3600);
const rounds = whole('BENCH_ROUNDS', 3, 1, 20);
const connections = whole('BENCH_CONNECTIONS', 50, 1, 10_000);
const warmupSeconds = whole('BENCH_WARMUP_SECONDS', 2, 0, 600);
const reads = whole('BENCH_READS', 40, 5, 10_000);
const keep = process.env.BENCH_KEEP === '1';
const stores = (process.env.BENCH_SIZE_STORES ?? 'sqlite,postgres').split(',').map((s) => s.trim());
const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const LAST_RUN = fileURLToPath(new URL('../../../bench/last-size-run.json', import.meta.url));

type Kind = 'sqlite' | 'postgres';

export interface StoreReport {
  store: Kind;
  fill: FillResult;
  /** Seconds that opening the filled inbox took the server (migrations, the planner's statistics). */
  startSeconds: number;
  reads: ReadResult[];
  /** Per round: ingest into the full inbox, into an empty one, into an empty one of the baseline build. */
  ingest: Array<{ full: IngestRun; empty: IngestRun; baseline: IngestRun }>;
}

export interface SizeReport {
  date: string;
  node: string;
  sqliteDriver: string;
  cpu: string;
  loadAverageAtStart: number[];
  loadAverageAtEnd?: number[];
  size: number;
  seconds: number;
  rounds: number;
  connections: number;
  loadGenerator: string;
  baseline: string;
  totalSeconds?: number;
  stores: StoreReport[];
}

const log = (line: string): void => {
  process.stderr.write(`bench:size: ${line}\n`);
};

/**
 * The server of one measurement: this build or the baseline's, on a SQLite
 * directory or a PostgreSQL schema; `config` undefined for the baseline,
 * which has no eventType setting (ingest sends to a source without one).
 */
function command(main: string, kind: Kind, dir: string, token: string, config: string | undefined): StartCommand {
  return {
    command: process.execPath,
    args: [...startFlags(), main],
    env: {
      RECEPTION_PORT: '0',
      RECEPTION_HOST: '127.0.0.1',
      RECEPTION_DATA: join(dir, 'data'),
      RECEPTION_TOKEN: token,
      RECEPTION_LOG_LEVEL: 'info',
      ...(config === undefined ? {} : { RECEPTION_CONFIG: config }),
      ...(kind === 'postgres' ? { RECEPTION_DATABASE_URL: BENCH_DATABASE_URL, RECEPTION_DATABASE_SCHEMA: benchSchema(dir) } : {}),
    },
  };
}

async function openStore(kind: Kind, dir: string): Promise<InboxStore> {
  if (kind === 'sqlite') {
    mkdirSync(join(dir, 'data'), { recursive: true });
    return new SqliteStore({ file: join(dir, 'data', 'reception.sqlite'), durability: 'relaxed' });
  }
  return PostgresStore.open({ connectionString: BENCH_DATABASE_URL, schema: benchSchema(dir) });
}

/** PostgreSQL's statistics as autovacuum would have them by now (it runs ANALYZE on its own, later). */
async function analyze(dir: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`SET search_path = ${benchSchema(dir)}; ANALYZE`);
  } finally {
    await client.end();
  }
}

async function measureStore(
  kind: Kind,
  runDir: string,
  token: string,
  config: string,
  baseline: string,
  schemas: string[],
): Promise<StoreReport> {
  const full = join(runDir, kind, 'full');
  mkdirSync(full, { recursive: true });
  if (kind === 'postgres') schemas.push(full);
  const now = Date.now();
  log(`${kind}: filling ${size} deliveries`);
  const store = await openStore(kind, full);
  const filled = await fill(store, size, now, kind === 'sqlite' ? 2000 : 1000, log);
  await store.close();
  if (kind === 'postgres') await analyze(full);
  log(`${kind}: filled in ${filled.appendSeconds.toFixed(0)} s + ${filled.indexSeconds.toFixed(0)} s of indexing`);

  const started = performance.now();
  const server = await startServer(command(MAIN, kind, full, token, config), full, 300_000);
  const startSeconds = (performance.now() - started) / 1000;
  let readResults: ReadResult[];
  try {
    readResults = await measureReads(server.url, token, readCases(now), reads, 5);
  } finally {
    await stopChild(server.child, 'SIGTERM', 30_000);
  }
  for (const read of readResults) log(`${kind}: ${read.name}: p50 ${read.p50Ms.toFixed(1)} ms, p95 ${read.p95Ms.toFixed(1)} ms`);

  const generator = chooseLoadGenerator(Math.max(1, Math.min(4, Math.floor(cpus().length / 2))));
  const options = { generator, connections, seconds, warmupSeconds, token, lagLimitSeconds: 300 };
  const ingest: StoreReport['ingest'] = [];
  for (let round = 1; round <= rounds; round++) {
    const empty = join(runDir, kind, `empty-${round}`);
    const old = join(runDir, kind, `baseline-${round}`);
    mkdirSync(empty, { recursive: true });
    mkdirSync(old, { recursive: true });
    if (kind === 'postgres') schemas.push(empty, old);
    // The order turns each round, so that no case always runs first (or last) on a busy machine.
    const order = (['full', 'empty', 'baseline'] as const).map(
      (_, i, all) => all[(i + round - 1) % all.length] as (typeof all)[number],
    );
    const results: Partial<Record<'full' | 'empty' | 'baseline', IngestRun>> = {};
    for (const which of order) {
      const dir = which === 'full' ? full : which === 'empty' ? empty : old;
      const main = which === 'baseline' ? baseline : MAIN;
      const start = command(main, kind, dir, token, which === 'baseline' ? undefined : config);
      results[which] = await measureIngest(start, dir, { ...options, measureLag: which !== 'baseline' });
      log(`${kind} round ${round}: ${which} ${results[which]?.perSecond.toFixed(0)}/s`);
    }
    ingest.push({ full: results.full as IngestRun, empty: results.empty as IngestRun, baseline: results.baseline as IngestRun });
  }
  return { store: kind, fill: filled, startSeconds, reads: readResults, ingest };
}

async function main(): Promise<void> {
  const began = performance.now();
  const runDir = mkdtempSync(join(tmpdir(), 'reception-bench-size-'));
  const token = randomBytes(24).toString('hex');
  const config = join(runDir, 'reception.json');
  writeFileSync(
    config,
    JSON.stringify({ sources: Object.fromEntries(Object.entries(EVENT_TYPE_SETTINGS).map(([s, e]) => [s, { eventType: e }])) }),
  );
  const baseline = baselineMain(runDir, log);
  const cpuList = cpus();
  const report: SizeReport = {
    date: new Date().toISOString(),
    node: process.version,
    sqliteDriver: describeDriver(),
    cpu: `${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown CPU'}`,
    loadAverageAtStart: loadavg(),
    size,
    seconds,
    rounds,
    connections,
    loadGenerator: chooseLoadGenerator(1).label.replace(/ \(.*\)$/, ''),
    baseline: baseline.ref,
    stores: [],
  };
  const schemas: string[] = [];
  try {
    for (const kind of stores) {
      if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`BENCH_SIZE_STORES: "${kind}" is not sqlite or postgres`);
      if (kind === 'postgres') {
        const why = await postgresUnavailable();
        if (why !== undefined) {
          log(`skipping postgres: ${why}`);
          continue;
        }
      }
      report.stores.push(await measureStore(kind, runDir, token, config, baseline.main, schemas));
    }
  } finally {
    for (const dir of schemas) await dropBenchSchema(dir).catch(() => undefined);
    if (!keep) rmSync(runDir, { recursive: true, force: true });
  }
  report.loadAverageAtEnd = loadavg();
  report.totalSeconds = (performance.now() - began) / 1000;
  writeFileSync(LAST_RUN, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(sizeMarkdown(report));
  log(`done in ${report.totalSeconds.toFixed(0)} s; the report is also in ${LAST_RUN}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:size failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
