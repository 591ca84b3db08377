import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StartCommand } from './cases.js';
import { startChild, stopChild, type Child } from './child-processes.js';

export interface ServerUnderTest {
  child: Child;
  url: string;
  /** The file that the server's stdout (its JSON log) goes to. */
  stdoutFile: string;
  stderrFile: string;
}

/**
 * Starts a server with stdout and stderr going to files in `dir` (so the
 * bench process spends no CPU on the server's log), and resolves once the
 * "listening" line appears there.
 */
export async function startServer(start: StartCommand, dir: string, timeoutMs = 15_000): Promise<ServerUnderTest> {
  const stdoutFile = join(dir, 'stdout.log');
  const stderrFile = join(dir, 'stderr.log');
  const out = openSync(stdoutFile, 'w');
  const err = openSync(stderrFile, 'w');
  let child: Child;
  try {
    child = startChild(start.command, start.args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...start.env },
      stdio: ['ignore', out, err],
    });
  } finally {
    closeSync(out);
    closeSync(err);
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null || child.process.signalCode !== null || child.pid === -1) {
      throw new Error(`server exited (${await child.exited}) before listening:\n${tail(stderrFile)}${tail(stdoutFile)}`);
    }
    const url = listeningUrl(stdoutFile);
    if (url !== undefined) return { child, url, stdoutFile, stderrFile };
    await sleep(50);
  }
  await stopChild(child, 'SIGKILL', 1000);
  throw new Error(`server did not log "listening" within ${timeoutMs} ms:\n${tail(stderrFile)}${tail(stdoutFile)}`);
}

function listeningUrl(file: string): string | undefined {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
      if (entry.msg === 'listening' && typeof entry.url === 'string') return entry.url;
    } catch {
      // a line still being written
    }
  }
  return undefined;
}

/** The last lines of a log file, for an error message. */
export function tail(file: string, bytes = 2000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.length === 0 ? '' : `--- ${file} (end) ---\n${text.slice(-bytes)}\n`;
  } catch {
    return '';
  }
}
