import { spawn } from 'node:child_process';
import { once } from 'node:events';

import { describe, it } from 'vitest';

import { MAIN, spawnServer } from '../helpers/server-process.js';

import { freePort } from '../helpers/free-port.js';

import { API_TOKEN, killAndWait } from '../helpers/server-children.js';

import { tempDir } from '../helpers/temp-dir.js';

async function eventually(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** README "Running it", RECEPTION_LOG_FORMAT: JSON for a pipe (log collectors), short lines on a terminal or when asked. */
describe.concurrent('log format', () => {
  it('is JSON when stdout is not a terminal (the default, auto)', async ({ expect, onTestFinished }) => {
    const data = tempDir('reception-log-format-');
    onTestFinished(() => data.remove());
    const server = await spawnServer({ RECEPTION_DATA: data.path, RECEPTION_TOKEN: API_TOKEN }, 30_000);
    onTestFinished(() => killAndWait(server));
    await fetch(`${server.url}/api/webhook/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    await eventually(() => server.logs.some((l) => l.includes('"msg":"webhook"')), 'the webhook line');
    const webhook = JSON.parse(server.logs.find((l) => l.includes('"msg":"webhook"')) ?? '{}') as Record<string, unknown>;
    expect(webhook).toMatchObject({ status: 200, source: 'github', size: 7, outcome: 'stored' });
  });

  it('is one short line per entry with RECEPTION_LOG_FORMAT=pretty', async ({ expect, onTestFinished }) => {
    const data = tempDir('reception-log-format-');
    onTestFinished(() => data.remove());
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        RECEPTION_DATA: data.path,
        RECEPTION_TOKEN: API_TOKEN,
        RECEPTION_PORT: String(port),
        RECEPTION_LOG_FORMAT: 'pretty',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await eventually(() => / {2}listening {2}url=/.test(stdout), 'the listening line', 30_000);
    const sent = (await (
      await fetch(`http://127.0.0.1:${port}/api/webhook/github`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      })
    ).json()) as { id: string };
    await eventually(() => stdout.includes(sent.id), 'the webhook line');
    const line = stdout.split('\n').find((l) => l.includes(sent.id)) ?? '';
    expect(line).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} {2}200 {2}github {2}7 B {2}${sent.id}$`));
    expect(stdout).not.toContain('{"level"');
  });

  it('is short lines, in colour, when stdout is a terminal (auto), and JSON there when asked', async ({
    expect,
    onTestFinished,
  }) => {
    for (const [format, pretty] of [
      ['', true],
      ['json', false],
    ] as const) {
      const data = tempDir('reception-log-format-');
      onTestFinished(() => data.remove());
      const port = await freePort();
      // script(1) gives the server a pseudo-terminal as its stdout, as a person's shell would.
      const child = spawn('script', ['-qfec', `${process.execPath} ${MAIN}`, '/dev/null'], {
        env: {
          PATH: process.env.PATH ?? '',
          RECEPTION_DATA: data.path,
          RECEPTION_TOKEN: API_TOKEN,
          RECEPTION_PORT: String(port),
          ...(format === '' ? {} : { RECEPTION_LOG_FORMAT: format }),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      // Killing script(1) leaves the server running (it takes the terminal's SIGHUP as a config reload):
      // Ctrl-C on the terminal stops it as it would a person's, then script ends with it.
      const stop = async (): Promise<void> => {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.write('\u0003');
          await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 10_000))]);
        }
        child.kill('SIGKILL');
      };
      onTestFinished(stop);
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      await eventually(() => out.includes('listening'), `the listening line (${format || 'auto'})`, 30_000);
      if (pretty) {
        // eslint-disable-next-line no-control-regex -- the SGR sequence that ends the dim time
        expect(out).toMatch(/\d\d:\d\d:\d\d\.\d{3}\u001b\[22m {2}listening {2}/);
        expect(out).not.toContain('{"level"');
      } else {
        expect(out).toContain('"msg":"listening"');
      }
      await stop();
    }
  });
});
