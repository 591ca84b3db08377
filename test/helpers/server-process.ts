import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startChild } from './child-process.js';

export const MAIN = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));

/** How to start the server: `node dist/src/main.js` unless a test says otherwise (`npm start`). */
export interface Launch {
  command: string;
  args: string[];
  cwd?: string;
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Every complete stdout line so far (JSON log lines). */
  logs: string[];
  stderr: () => string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

/** The one line a server writes on stderr when it starts with a token it did not generate: where to open the page. */
export function readyLine(url: string): string {
  return `Reception is ready. The inbox page: ${url}/  API docs: ${url}/docs  Webhooks: POST ${url}/api/webhook/<source>\n`;
}

/**
 * Starts the compiled server (`npm run build` first) as a real process on a
 * free loopback port and resolves once it logs "listening".
 */
export async function spawnServer(
  env: Record<string, string>,
  timeoutMs = 15_000,
  launch: Launch = { command: process.execPath, args: [MAIN] },
): Promise<ServerProcess> {
  const handle = startChild(
    launch.command,
    launch.args,
    { PATH: process.env.PATH ?? '', RECEPTION_HOST: '127.0.0.1', RECEPTION_PORT: '0', RECEPTION_LOG_LEVEL: 'info', ...env },
    launch.cwd,
  );
  let url = '';
  const listening = (line: string): boolean => {
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg !== 'listening' || entry.url === undefined) return false;
      url = entry.url;
      return true;
    } catch {
      return false; // not a log line
    }
  };
  try {
    await handle.waitFor(
      () => handle.lines.some(listening),
      () => 'the server did not log "listening"',
      timeoutMs,
    );
  } catch {
    const { exitCode, signalCode } = handle.child;
    if (exitCode !== null || signalCode !== null) {
      throw new Error(`server exited (${exitCode ?? signalCode ?? ''}) before listening: ${handle.stderr()}`);
    }
    handle.child.kill('SIGKILL');
    throw new Error(`server did not start in ${timeoutMs} ms: ${handle.stderr()}`);
  }
  return { child: handle.child, url, logs: handle.lines, stderr: handle.stderr, exited: handle.exited };
}
