import { describe, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/free-port.js';
import { API_TOKEN } from '../helpers/server-children.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startServerOnTerminal } from '../helpers/terminal-server.js';

/**
 * The terminal the server runs in is closed (the window, an SSH session):
 * the server gets SIGHUP (a config reload, README "Running it") and every
 * write to its stdout fails with EIO. It keeps answering, losing its log
 * lines, and SIGTERM still stops it. It did not: pino's exit hook retried
 * the failed line forever, so the server hung in `process.exit`.
 */
describe('the server whose terminal hung up', () => {
  it('still answers, and SIGTERM stops it within seconds', async ({ expect, onTestFinished }) => {
    const data = tempDir('reception-terminal-hangup-');
    onTestFinished(() => data.remove());
    const port = await freePort();
    const server = await startServerOnTerminal({
      RECEPTION_DATA: data.path,
      RECEPTION_TOKEN: API_TOKEN,
      RECEPTION_PORT: String(port),
    });
    onTestFinished(server.kill);

    await server.terminal.kill();
    expect(server.ended()).toBe(false);
    const answer = await fetch(`http://127.0.0.1:${port}/api/deliveries`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    expect(answer.status).toBe(200);

    process.kill(server.pid, 'SIGTERM');
    await eventually(server.ended, 10_000, 'the server is still running after SIGTERM');
  });
});
