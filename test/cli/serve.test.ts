import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { killAllClis, startCli, type CliProcess } from '../helpers/cli.js';
import { sendNumbered } from '../helpers/cli-send.js';
import { freePort } from '../helpers/free-port.js';

const TOKEN = 'serve-test-token-0123456789';
const dirs: Array<{ remove: () => void }> = [];

afterEach(() => {
  killAllClis();
  for (const dir of dirs.splice(0)) dir.remove();
});

/** The URL from the server's "listening" log line (a loaded machine may take a while to start it). */
async function listening(cli: CliProcess): Promise<string> {
  await cli.waitForStdout(/"msg":"listening"/, 40_000);
  const line =
    cli
      .stdout()
      .split('\n')
      .find((l) => l.includes('"msg":"listening"')) ?? '';
  return (JSON.parse(line) as { url: string }).url;
}

describe('reception serve', { timeout: 60_000 }, () => {
  it('starts a server on --port with its data in --data, answers /healthz, and stops on SIGTERM', async () => {
    const data = tempDir();
    dirs.push(data);
    const port = await freePort();
    const cli = startCli(['serve', '--port', String(port), '--data', data.path, '--token', TOKEN, '--log-level', 'info']);
    const url = await listening(cli);
    expect(url).toBe(`http://127.0.0.1:${port}`);

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    const sent = await sendNumbered(url, 'github', 1);
    const read = await fetch(`${url}/api/deliveries/${sent.id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(read.status).toBe(200);
    expect(existsSync(join(data.path, 'reception.sqlite'))).toBe(true);

    expect(await cli.stop()).toBe(0);
  });

  it('is the default command, and its flags win over the environment', async () => {
    const data = tempDir();
    dirs.push(data);
    const port = await freePort();
    // The variables say otherwise (an unusable port, another data dir); the flags decide.
    const cli = startCli(['--port', String(port), '--data', data.path], {
      RECEPTION_PORT: '1',
      RECEPTION_DATA: join(data.path, 'not-this-one'),
      RECEPTION_TOKEN: TOKEN,
    });
    const url = await listening(cli);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(existsSync(join(data.path, 'reception.sqlite'))).toBe(true);
    expect(existsSync(join(data.path, 'not-this-one'))).toBe(false);
    expect(await cli.stop()).toBe(0);
  });

  it('names the flag that has a bad value, and exits 2', async () => {
    const cli = startCli(['serve', '--durability', 'sometimes', '--retention', 'forever']);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain('--durability: expected "full" or "relaxed", got "sometimes"');
    expect(cli.stderr()).toContain('--retention: expected a duration');
  });

  it('has a flag for every setting, the incoming bound and the lease length included', async () => {
    const cli = startCli(['serve', '--incoming-max-bytes', '10', '--forward-lease-ms', '5']);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain('--incoming-max-bytes: expected a whole number from 1024 to 17179869184, got "10"');
    expect(cli.stderr()).toContain('--forward-lease-ms: expected a whole number from 1000 to 12000, got "5"');
  });

  it('a port in use and an unusable data directory name the flag that gave them, and suggest --port 0', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const data = tempDir();
      dirs.push(data);
      const inUse = startCli(['serve', '--port', String(port), '--data', data.path, '--token', TOKEN]);
      expect(await inUse.exited).toBe(1);
      expect(inUse.stderr()).toContain(
        `reception: the server could not start: port ${port} on 127.0.0.1 is already in use (--port): another program, or another Reception, listens there. Stop it, or choose another port (--port 0 picks a free one).`,
      );
      // The same port from the variable is named as the variable.
      const fromEnv = startCli(['serve', '--data', data.path], { RECEPTION_PORT: String(port), RECEPTION_TOKEN: TOKEN });
      expect(await fromEnv.exited).toBe(1);
      expect(fromEnv.stderr()).toContain('is already in use (RECEPTION_PORT)');

      const file = join(data.path, 'a-file');
      writeFileSync(file, 'not a directory');
      const badData = startCli(['serve', '--port', '0', '--data', join(file, 'data'), '--token', TOKEN]);
      expect(await badData.exited).toBe(1);
      expect(badData.stderr()).toContain(
        `the data directory ${join(file, 'data')} (--data) cannot be used: a file, not a directory, is in the way (ENOTDIR). Point --data at a directory that this user can write.`,
      );
    } finally {
      taken.close();
    }
  });
});
