import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { testDatabaseUrl } from './postgres.js';

/**
 * Stops and starts the machine's PostgreSQL cluster, for the tests that
 * prove Reception rides through a database restart (test/serial only: it
 * breaks every other test that uses the database at that moment).
 */
export interface PostgresControl {
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Starts the cluster unless it already answers; for afterAll. */
  ensureRunning(): Promise<void>;
}

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('pg_ctlcluster', args, { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`pg_ctlcluster ${args.join(' ')}: ${error.message} ${stderr}`));
      else resolve(stdout);
    });
  });
}

async function answers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Waits until PostgreSQL takes queries again; rejects after `ms`. */
export async function waitForPostgres(ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await answers())) {
    if (performance.now() > deadline) throw new Error(`PostgreSQL did not answer within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The control of the local cluster (`pg_ctlcluster`, run as root), or why there is none. */
export function postgresControl(): PostgresControl | string {
  const url = new URL(testDatabaseUrl());
  if (!['127.0.0.1', 'localhost'].includes(url.hostname)) return `the test database ${url.host} is not on this machine`;
  if (process.getuid?.() !== 0) return 'restarting PostgreSQL needs root (pg_ctlcluster)';
  if (!existsSync('/etc/postgresql')) return 'no /etc/postgresql: not a Debian-style PostgreSQL install';
  const version = process.env.RECEPTION_TEST_PG_VERSION ?? readdirSync('/etc/postgresql').sort().at(-1);
  if (version === undefined) return 'no cluster under /etc/postgresql';
  const cluster = process.env.RECEPTION_TEST_PG_CLUSTER ?? 'main';
  const control = (action: string): string[] => ['--skip-systemctl-redirect', version, cluster, action];
  return {
    stop: async () => {
      await run(control('stop'));
    },
    start: async () => {
      await run(control('start'));
      await waitForPostgres(60_000);
    },
    ensureRunning: async () => {
      if (await answers()) return;
      await run(control('start')).catch(() => undefined);
      await waitForPostgres(60_000);
    },
  };
}

/** The control, or undefined after a loud skip; under CI=true a missing control is a failure. */
export function requirePostgresControl(suite: string): PostgresControl | undefined {
  const control = postgresControl();
  if (typeof control !== 'string') return control;
  if (process.env.CI === 'true') throw new Error(`${suite} must restart PostgreSQL, and cannot: ${control}.`);
  process.stderr.write(`\n!!! SKIPPING ${suite}: ${control}.\n\n`);
  return undefined;
}
