import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'vitest';
import { startChild, type ChildHandle } from '../helpers/child-process.js';
import { MAIN } from '../helpers/server-process.js';
import { freePort } from '../helpers/free-port.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { withTimeout } from '../helpers/server-children.js';

/**
 * CONTRACT 5 and README "Configuration": a bad environment stops the server
 * at start with exit code 1 and a message on stderr that names every bad
 * variable; nothing listens and nothing is written.
 */

interface Finished {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** The processes and directories of one test: killed and removed when it finishes (tests run concurrently). */
class Started {
  private readonly children: ChildHandle[] = [];
  private readonly dirs: Array<{ remove: () => void }> = [];

  constructor(context: TestContext) {
    context.onTestFinished(() => {
      for (const { child } of this.children) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      for (const dir of this.dirs) dir.remove();
    });
  }

  /** A data directory path that does not exist yet. */
  unusedDataDir(): string {
    const dir = tempDir('reception-settings-');
    this.dirs.push(dir);
    return join(dir.path, 'data');
  }

  spawn(env: Record<string, string>): ChildHandle {
    const child = startChild(process.execPath, [MAIN], { PATH: process.env.PATH ?? '', ...env });
    this.children.push(child);
    return child;
  }
}

/** Runs the server with exactly `env` (plus PATH) until it exits; kills it after 15 s. */
async function runToExit(started: Started, env: Record<string, string>): Promise<Finished> {
  const child = started.spawn(env);
  const code = await withTimeout(child.exited, 15_000, 'the server did not exit within 15 s');
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

const problems = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('  - '));

describe.concurrent('invalid environment', () => {
  it('exits 1 naming every bad variable at once, without listening or writing anything', async (context) => {
    const { expect } = context;
    const started = new Started(context);
    const data = started.unusedDataDir();
    const badToken = 'sp4ced s3cret';
    const result = await runToExit(started, {
      RECEPTION_DATA: data,
      RECEPTION_PORT: 'abc',
      RECEPTION_DURABILITY: 'fast',
      RECEPTION_RETENTION: 'soon',
      RECEPTION_TOKEN: badToken,
    });
    expect(result.code).toBe(1);
    const lines = problems(result.stderr);
    for (const name of ['RECEPTION_PORT', 'RECEPTION_DURABILITY', 'RECEPTION_RETENTION', 'RECEPTION_TOKEN']) {
      expect(
        lines.filter((line) => line.includes(name)),
        `${name} in: ${result.stderr}`,
      ).toHaveLength(1);
    }
    expect(lines).toHaveLength(4);
    // The values that are not secret are quoted back to help; the token is not.
    expect(result.stderr).toContain('"abc"');
    expect(result.stderr).toContain('"fast"');
    expect(result.stderr).toContain('"soon"');
    expect(result.stderr).not.toContain(badToken);
    expect(result.stdout).not.toContain('listening');
    expect(existsSync(data)).toBe(false);
  });

  it('exits 1 for each bad variable alone, and nothing listens on the port it was given', async (context) => {
    const { expect } = context;
    const started = new Started(context);
    // Each start costs about a second of CPU: two cases, one of them a variable not named above.
    const cases: Array<[string, string]> = [
      ['RECEPTION_DURABILITY', 'fast'],
      ['RECEPTION_REQUEST_TIMEOUT_MS', '-5'],
    ];
    const ports = await Promise.all(cases.map(() => freePort()));
    const data = cases.map(() => started.unusedDataDir());
    const results = await Promise.all(
      cases.map(([name, value], i) =>
        runToExit(started, {
          RECEPTION_DATA: data[i] ?? '',
          RECEPTION_HOST: '127.0.0.1',
          RECEPTION_PORT: String(ports[i]),
          [name]: value,
        }),
      ),
    );
    for (const [i, [name]] of cases.entries()) {
      const result = results[i];
      expect(result?.code, name).toBe(1);
      const lines = problems(result?.stderr ?? '');
      expect(lines, name).toHaveLength(1);
      expect(lines[0], name).toContain(name);
      expect(result?.stdout, name).not.toContain('listening');
      expect(existsSync(data[i] ?? ''), name).toBe(false);
      expect(await refused(ports[i] ?? 0), name).toBe(true);
    }
  });

  it('exits 1 naming RECEPTION_DATA when the data directory cannot be made, before opening any store', async (context) => {
    const { expect } = context;
    const started = new Started(context);
    const file = join(started.unusedDataDir(), '..', 'a-file');
    writeFileSync(file, 'not a directory');
    const port = await freePort();
    const result = await runToExit(started, { RECEPTION_DATA: join(file, 'data'), RECEPTION_PORT: String(port) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `the data directory ${join(file, 'data')} (RECEPTION_DATA) cannot be used: a file, not a directory, is in the way (ENOTDIR)`,
    );
    expect(result.stderr).toContain('Point RECEPTION_DATA at a directory that this user can write');
    expect(await refused(port)).toBe(true);
  });

  it('a port in use is said so, naming RECEPTION_PORT and how to get a free one (RECEPTION_PORT=0)', async (context) => {
    const { expect } = context;
    const started = new Started(context);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    context.onTestFinished(() => void taken.close());
    const port = (taken.address() as AddressInfo).port;
    const result = await runToExit(started, {
      RECEPTION_DATA: started.unusedDataDir(),
      RECEPTION_PORT: String(port),
      RECEPTION_TOKEN: 'settings-test-token-0123456789',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `Reception could not start: port ${port} on 127.0.0.1 is already in use (RECEPTION_PORT): another program, or another Reception, listens there. Stop it, or choose another port (RECEPTION_PORT=0 picks a free one).`,
    );
  });

  it('starts with the same variables once they are valid, says what it loaded, and warns of a variable that nothing reads', async (context) => {
    const { expect } = context;
    const started = new Started(context);
    const data = started.unusedDataDir();
    const configDir = started.unusedDataDir();
    mkdirSync(configDir);
    const config = join(configDir, 'reception.yaml');
    writeFileSync(config, 'strict: true\nsources:\n  a: {}\n  b: {}\n');
    const port = await freePort();
    const child = started.spawn({
      RECEPTION_DATA: data,
      RECEPTION_HOST: '127.0.0.1',
      RECEPTION_PORT: String(port),
      RECEPTION_DURABILITY: 'relaxed',
      RECEPTION_RETENTION: '30d',
      RECEPTION_TOKEN: 'long-enough-token-1234',
      RECEPTION_CONFIG: config,
      RECEPTION_SHUTDOWN_GRACE: '5000',
    });
    await child.waitForStdout(/"msg":"listening"/, 15_000);
    const stdout = child.stdout();
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(stdout).toContain('"durability":"relaxed"');
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((line) => line.msg === 'listening')).toMatchObject({ retention: '720 h' });
    expect(lines.find((line) => line.msg === 'config loaded')).toMatchObject({ file: config, sources: 2, strict: true });
    expect(lines.find((line) => line.variable === 'RECEPTION_SHUTDOWN_GRACE')).toMatchObject({
      level: 40,
      meant: 'RECEPTION_SHUTDOWN_GRACE_MS',
      msg: 'RECEPTION_SHUTDOWN_GRACE is not a Reception setting and is ignored: did you mean RECEPTION_SHUTDOWN_GRACE_MS?',
    });
  });

  it('with PostgreSQL, the listening line names the database and claims no SQLite durability', async (context) => {
    const { expect } = context;
    if (!(await requirePostgres('the PostgreSQL listening line'))) return;
    const started = new Started(context);
    const schema = freshSchema();
    context.onTestFinished(() => dropSchema(schema));
    const port = await freePort();
    const child = started.spawn({
      RECEPTION_HOST: '127.0.0.1',
      RECEPTION_PORT: String(port),
      RECEPTION_DATA: started.unusedDataDir(),
      RECEPTION_TOKEN: 'long-enough-token-1234',
      RECEPTION_DATABASE_URL: testDatabaseUrl(),
      RECEPTION_DATABASE_SCHEMA: schema,
      RECEPTION_DURABILITY: 'relaxed',
    });
    await child.waitForStdout(/"msg":"listening"/, 25_000);
    const stdout = child.stdout();
    const listening = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'listening');
    expect(listening).toMatchObject({ store: 'postgres', schema, durability: "PostgreSQL's synchronous_commit" });
    expect(String(listening?.database)).toContain('127.0.0.1:5432/test');
    expect(listening).not.toHaveProperty('dataDir');
    expect(stdout).not.toContain('"durability":"relaxed"');
  }, 40_000);
});
