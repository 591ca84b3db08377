import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

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
  /** Every stdout line so far (JSON log lines). */
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
  const child = spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env: { PATH: process.env.PATH ?? '', RECEPTION_HOST: '127.0.0.1', RECEPTION_PORT: '0', RECEPTION_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    const lines = createInterface({ input: child.stdout ?? process.stdin });
    lines.on('line', (line) => {
      logs.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'listening' && entry.url !== undefined) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening: ${stderr}`));
    });
  });
  return { child, url, logs, stderr: () => stderr, exited };
}
