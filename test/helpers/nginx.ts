import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';

/** Real nginx for the tests that exercise docs/nginx.conf. */

/** The nginx binary on PATH or in /usr/sbin, or undefined. */
export function findNginx(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin'];
  for (const dir of dirs) {
    if (dir === '') continue;
    const candidate = join(dir, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The nginx binary, or undefined after a loud skip; under CI=true a missing nginx is a failure. */
export function requireNginx(suite: string): string | undefined {
  const nginx = findNginx();
  if (nginx !== undefined) return nginx;
  const message = 'nginx is not installed (apt-get install nginx-light; .ci/run installs it)';
  if (process.env.CI === 'true') throw new Error(`${message}. CI needs it for ${suite}.`);
  process.stderr.write(`\n!!! SKIPPING ${suite}: ${message}.\n\n`);
  return undefined;
}

/**
 * The example config with its `listen` and upstream `server` lines pointed
 * at loopback ports; everything else as documented.
 */
export function templateNginxConf(conf: string, listenPort: number, upstreams: readonly string[]): string {
  const serverLine = /^(\s*)server\s+127\.0\.0\.1:\d+([^;]*);\s*$/;
  const lines: string[] = [];
  let replacedUpstreams = false;
  let replacedListen = false;
  for (const line of conf.split('\n')) {
    const server = serverLine.exec(line);
    if (server !== null) {
      if (!replacedUpstreams)
        lines.push(...upstreams.map((hostPort) => `${server[1] ?? ''}server ${hostPort}${server[2] ?? ''};`));
      replacedUpstreams = true;
      continue;
    }
    const listen = /^(\s*)listen\s+80;\s*$/.exec(line);
    if (listen !== null) {
      lines.push(`${listen[1] ?? ''}listen 127.0.0.1:${listenPort};`);
      replacedListen = true;
      continue;
    }
    lines.push(line);
  }
  if (!replacedUpstreams || !replacedListen)
    throw new Error('docs/nginx.conf no longer has the `listen 80;` and `server 127.0.0.1:…` lines the test replaces');
  return lines.join('\n');
}

export interface RunningNginx {
  url: string;
  child: ChildProcess;
  errorLog: () => string;
  stop(): Promise<void>;
}

/**
 * Runs nginx in the foreground (one process, no daemon) with `siteConf`
 * included in its http {} block; every file it writes stays in `dir`.
 */
export async function startNginx(nginx: string, dir: string, siteConf: string, port: number): Promise<RunningNginx> {
  const site = join(dir, 'reception.conf');
  const errorLog = join(dir, 'error.log');
  writeFileSync(site, siteConf);
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'master_process off;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${errorLog} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${join(dir, 'access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`),
      `  include ${site};`,
      '}',
      '',
    ].join('\n'),
  );
  const args = ['-p', `${dir}/`, '-e', errorLog, '-c', join(dir, 'nginx.conf')];
  const readLog = (): string => {
    try {
      return readFileSync(errorLog, 'utf8');
    } catch {
      return '';
    }
  };
  let output = '';
  const child = spawn(nginx, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = performance.now() + 15_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}): ${output} ${readLog()}`);
    }
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen on ${port} within 15 s: ${output} ${readLog()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    errorLog: readLog,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
