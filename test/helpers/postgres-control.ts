import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A PostgreSQL server of the test's own, on a free loopback port in a temp
 * directory, for the tests that prove Reception rides through a database
 * stop and start. The machine's shared PostgreSQL (5432) is never stopped:
 * other tests use it at the same moment.
 */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** Stops the server (fast shutdown: open sessions are cut, as when a database host restarts). */
  stop(): Promise<void>;
  /** Starts it again and waits until it takes queries. */
  start(): Promise<void>;
  /** Stops it (if running) and deletes its files; for afterAll. */
  destroy(): Promise<void>;
}

function run(command: string, args: string[], asUser: string | undefined): Promise<string> {
  const [file, argv] = asUser === undefined ? [command, args] : ['runuser', ['-u', asUser, '--', command, ...args]];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${command} ${args.join(' ')}: ${error.message} ${stderr}`));
      else resolve(stdout);
    });
  });
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
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

/** Waits until the server at `url` takes queries; rejects after `ms`. */
export async function waitForPostgres(url: string, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await answers(url))) {
    if (performance.now() > deadline) throw new Error(`PostgreSQL at ${url} did not answer within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The directory of initdb and pg_ctl: RECEPTION_TEST_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin. */
function binDir(): string | undefined {
  if (process.env.RECEPTION_TEST_PG_BIN !== undefined) return process.env.RECEPTION_TEST_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b))
    .at(-1);
  return version === undefined ? undefined : join(root, version, 'bin');
}

/**
 * Why no private server can be started here, or undefined. PostgreSQL
 * refuses to run as root, so as root the server runs as the `postgres` user.
 */
function unavailable(): string | undefined {
  const bin = binDir();
  if (bin === undefined) return 'no PostgreSQL server binaries (initdb) under /usr/lib/postgresql; set RECEPTION_TEST_PG_BIN';
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser'))
    return 'running as root without runuser to start PostgreSQL as the postgres user';
  return undefined;
}

/** Starts a private PostgreSQL server (initdb, then pg_ctl start on a free port). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (bin === undefined) throw new Error(unavailable());
  const asUser = process.getuid?.() === 0 ? 'postgres' : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'reception-pg-'));
  if (asUser !== undefined) {
    const { uid, gid } = await userIds(asUser);
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  await run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'], asUser);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=60`;
  const pgCtl = (...args: string[]): Promise<string> => run(join(bin, 'pg_ctl'), ['-D', data, ...args], asUser);
  const start = async (): Promise<void> => {
    await pgCtl('-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start');
    await waitForPostgres(url, 60_000);
  };
  let running = false;
  await start();
  running = true;
  return {
    url,
    stop: async () => {
      await pgCtl('-m', 'fast', '-w', 'stop');
      running = false;
    },
    start: async () => {
      await start();
      running = true;
    },
    destroy: async () => {
      if (running) await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function userIds(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', user], undefined), run('id', ['-g', user], undefined)]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** True to run a suite that needs a private server; a loud skip locally, a failure under CI=true. */
export function requirePrivatePostgres(suite: string): boolean {
  const problem = unavailable();
  if (problem === undefined) return true;
  if (process.env.CI === 'true') throw new Error(`${suite} must start its own PostgreSQL server, and cannot: ${problem}.`);
  process.stderr.write(`\n!!! SKIPPING ${suite}: ${problem}.\n\n`);
  return false;
}
