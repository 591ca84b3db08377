import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { API_TOKEN, killAndWait, timedExit } from '../helpers/server-children.js';

/**
 * The README's first command runs Reception as `npm start`: npm, the shell
 * it runs the script in, then node. A supervisor or a terminal signals npm.
 * npm passes SIGTERM and SIGINT on to its child; the script `exec`s node so
 * that this child is Reception itself and not a shell that would leave it
 * running, orphaned, with nothing reloaded and nothing stopped.
 *
 * `--ignore-scripts` skips `prestart` (the build): `npm test` built already,
 * and rebuilding `dist` here would pull it from under the other test files.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.concurrent('npm start', () => {
  it.for(['SIGTERM', 'SIGINT'] as const)(
    'passes %s on to Reception, which commits, stops and exits 0, and npm exits 0',
    async (signal, { expect, onTestFinished }) => {
      const data = tempDir('reception-npm-start-');
      onTestFinished(() => data.remove());
      const server = await spawnServer(
        { RECEPTION_DATA: data.path, RECEPTION_TOKEN: API_TOKEN, HOME: process.env.HOME ?? data.path },
        60_000,
        { command: 'npm', args: ['start', '--silent', '--ignore-scripts'], cwd: ROOT },
      );
      const listening = JSON.parse(server.logs.find((line) => line.includes('"msg":"listening"')) ?? '{}') as { pid?: number };
      const receptionPid = listening.pid;
      onTestFinished(async () => {
        if (receptionPid !== undefined && isRunning(receptionPid)) process.kill(receptionPid, 'SIGKILL');
        await killAndWait(server);
      });
      expect(typeof receptionPid).toBe('number');
      // The pid in the log line is Reception's own, not npm's: the one to send SIGHUP to.
      expect(receptionPid).not.toBe(server.child.pid);

      const sent = await fetch(`${server.url}/api/webhook/npm-start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"kept":true}',
      });
      expect(sent.status).toBe(200);

      server.child.kill(signal);
      const exit = await timedExit(server, 10_000);
      expect(exit.code).toBe(0);
      expect(server.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
      expect(isRunning(receptionPid ?? -1)).toBe(false);
    },
  );
});
