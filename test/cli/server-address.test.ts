import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { freePort } from '../helpers/free-port.js';
import { killAllClis, runCli, startCli } from '../helpers/cli.js';
import { sendNumbered } from '../helpers/cli-send.js';

let server: RunningApp;

beforeEach(async () => {
  server = await startApp();
});

afterEach(async () => {
  killAllClis();
  await server.close();
});

const port = (): string => new URL(server.url).port;

describe('which server the client commands talk to', { timeout: 60_000 }, () => {
  it("without RECEPTION_URL, RECEPTION_PORT (the server's own variable) names the port on loopback", async () => {
    const cli = startCli(['tail'], { RECEPTION_PORT: port(), RECEPTION_TOKEN: server.token });
    await cli.waitForStderr(new RegExp(`connected to http://127\\.0\\.0\\.1:${port()}/api/stream`));
    const sent = await sendNumbered(server.url, 'github', 1);
    const [line = ''] = await cli.waitForLines(1);
    expect(line).toContain(sent.id);
    expect(await cli.stop()).toBe(0);
  });

  it('RECEPTION_HOST=0.0.0.0 (every interface) is reached on loopback; RECEPTION_URL wins over both', async () => {
    const viaHost = startCli(['tail'], { RECEPTION_HOST: '0.0.0.0', RECEPTION_PORT: port(), RECEPTION_TOKEN: server.token });
    await viaHost.waitForStderr(new RegExp(`connected to http://127\\.0\\.0\\.1:${port()}/`));
    await viaHost.stop();
    const nobody = await freePort();
    const viaUrl = await runCli(['export'], {
      RECEPTION_URL: server.url,
      RECEPTION_PORT: String(nobody),
      RECEPTION_TOKEN: server.token,
    });
    expect(viaUrl.code).toBe(0);
  });
});

describe('--url and RECEPTION_URL take a port alone, as every URL on the command line does', { timeout: 60_000 }, () => {
  it('a port is the server on 127.0.0.1', async () => {
    const viaEnv = await runCli(['destinations', '--json'], { RECEPTION_URL: port(), RECEPTION_TOKEN: server.token });
    expect(viaEnv.stderr).toContain('The server has no destinations');
    expect(viaEnv.code).toBe(0);
    const viaFlag = startCli(['tail', '--url', `:${port()}`], { RECEPTION_TOKEN: server.token });
    await viaFlag.waitForStderr(new RegExp(`connected to http://127\\.0\\.0\\.1:${port()}/api/stream`));
    await viaFlag.stop();
  });
});

describe('a server that was never reached is an error, not a retry loop', { timeout: 60_000 }, () => {
  it('tail, listen and export exit 1 at once with "cannot connect to <url>, is Reception running?"', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const env = { RECEPTION_URL: nobody, RECEPTION_TOKEN: server.token, HOME: server.dataDir };
    const expected = `reception: cannot connect to ${nobody}, is Reception running? (--url) [fetch failed: connect ECONNREFUSED`;
    for (const args of [['tail'], ['listen', '--forward-to', '3000'], ['export'], ['forwards']]) {
      const started = Date.now();
      const result = await runCli(args, env);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(expected);
      expect(result.stderr).not.toContain('reconnecting');
      expect(Date.now() - started).toBeLessThan(5000);
    }
  });

  it('RECEPTION_PORT of a server that is not running is named in the message', async () => {
    const nobody = await freePort();
    const result = await runCli(['tail'], { RECEPTION_PORT: String(nobody), RECEPTION_TOKEN: server.token });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot connect to http://127.0.0.1:${nobody}, is Reception running? (--url)`);
  });
});

describe('npx reception', { timeout: 60_000 }, () => {
  it('runs the built command from the clone, as the README says', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const { stdout } = await promisify(execFile)('npx', ['--no', 'reception', 'version'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    });
    expect(stdout).toMatch(/^reception \d+\.\d+\.\d+\n$/);
  });
});
