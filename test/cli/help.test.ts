import { afterEach, describe, expect, it } from 'vitest';
import { killAllClis, runCli } from '../helpers/cli.js';

const COMMANDS = ['serve', 'tail', 'listen', 'replay', 'export', 'forwards', 'retry', 'destinations', 'check-config'];

afterEach(killAllClis);

describe('reception --help', () => {
  it('names every command, with an example of each', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const command of COMMANDS) {
      expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
      expect(stdout).toContain(`reception ${command}`);
    }
  });

  it.each(COMMANDS)('explains "%s" with its flags and an example', async (command) => {
    const { code, stdout } = await runCli([command, '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`reception ${command}: `);
    expect(stdout).toContain('Flags:');
    expect(stdout).toMatch(new RegExp(`Examples:\\n  reception ${command}`));
    expect((await runCli(['help', command])).stdout).toBe(stdout);
  });

  it('lists every flag a command accepts in its help', async () => {
    const { stdout } = await runCli(['listen', '--help']);
    for (const flag of ['--forward-to', '--source', '--state', '--timeout', '--url', '--token']) expect(stdout).toContain(flag);
    const retry = (await runCli(['retry', '--help'])).stdout;
    for (const flag of ['--failed', '--destination', '--source', '--since', '--until', '--url', '--token'])
      expect(retry).toContain(flag);
    const forwards = (await runCli(['forwards', '--help'])).stdout;
    for (const flag of ['--status', '--destination', '--source', '--limit', '--json']) expect(forwards).toContain(flag);
    const serve = (await runCli(['serve', '--help'])).stdout;
    for (const flag of [
      '--port',
      '--host',
      '--data',
      '--token',
      '--durability',
      '--retention',
      '--max-body-bytes',
      '--trusted-proxies',
      '--log-level',
    ]) {
      expect(serve).toContain(flag);
    }
  });
});

it('--version and the version command print the package version', async () => {
  for (const args of [['--version'], ['version']]) {
    const { code, stdout } = await runCli(args);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^reception \d+\.\d+\.\d+\n$/);
  }
});

describe('command line mistakes exit 2 with a clear message', () => {
  it('an unknown command', async () => {
    const { code, stderr, stdout } = await runCli(['tial']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('unknown command "tial" (did you mean "tail"?)');
    expect(stderr).toContain('reception --help');
  });

  it("an unknown flag, named, with the command's help to read", async () => {
    const { code, stderr } = await runCli(['tail', '--sauce', 'x']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown flag --sauce for "reception tail" (did you mean --source?)');
    expect(stderr).toContain('reception tail --help');
  });

  it('a mistyped flag gets the one meant, as a mistyped config key does; a flag far from any gets none', async () => {
    const cases: Array<[string[], string]> = [
      [['listen', '--forward', 'x'], '(did you mean --forward-to?)'],
      [['listen', '--fowrard-to', 'x'], '(did you mean --forward-to?)'],
      [['export', '--sinse', '24h'], '(did you mean --since?)'],
      [['serve', '--prot', '8080'], '(did you mean --port?)'],
      [['listen', '--retry-faild'], '(did you mean --retry-failed?)'],
    ];
    for (const [args, hint] of cases) {
      const { code, stderr } = await runCli(args);
      expect(code).toBe(2);
      expect(stderr).toContain(hint);
    }
    const far = await runCli(['tail', '--completely-different']);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('unknown flag --completely-different for "reception tail".');
  });

  it('a flag without its value, a missing argument, a bad value', async () => {
    const missingValue = await runCli(['listen', '--forward-to']);
    expect(missingValue.code).toBe(2);
    expect(missingValue.stderr).toContain('--forward-to needs a value');

    const noTarget = await runCli(['listen', '--token', 'x'.repeat(20)]);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain('--forward-to URL is required');

    const noId = await runCli(['replay', '--to', 'http://127.0.0.1:9/']);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain('reception replay <id or seq>');

    const badSince = await runCli(['export', '--since', 'yesterday', '--token', 'x'.repeat(20)]);
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toContain('--since');
    // Date.parse would take February 30th as March 2nd.
    const noSuchDay = await runCli(['export', '--since', '2026-02-30', '--token', 'x'.repeat(20)]);
    expect(noSuchDay.code).toBe(2);
    expect(noSuchDay.stderr).toContain('--since: expected an RFC 3339 time');

    const negative = await runCli(['tail', '--after', '-1']);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('a value that begins with "-" is written --after=<value>');

    const badPort = await runCli(['serve', '--port', '99999']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--port: expected a whole number from 0 to 65535, got "99999"');
  });
});
