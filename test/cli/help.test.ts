import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killAllClis, runCli, type CliResult } from '../helpers/cli.js';
import { runCliInOneProcess } from '../helpers/cli-in-process.js';

const COMMANDS = [
  'serve',
  'tail',
  'listen',
  'replay',
  'export',
  'forwards',
  'retry',
  'destinations',
  'issues',
  'check-config',
  'trigger',
];

const TOKEN = 'x'.repeat(20);
const MISTYPED: Array<[string[], string]> = [
  [['listen', '--forward', 'x'], '(did you mean --forward-to?)'],
  [['listen', '--fowrard-to', 'x'], '(did you mean --forward-to?)'],
  [['export', '--sinse', '24h'], '(did you mean --since?)'],
  [['serve', '--prot', '8080'], '(did you mean --port?)'],
  [['listen', '--retry-faild'], '(did you mean --retry-failed?)'],
];

/**
 * The command lines whose point is what they print and their exit code, run
 * in one process (test/helpers/cli-in-process.ts); what is about the process
 * (`--help`, `--version`, an unknown command and an unknown flag) is spawned.
 */
const IN_ONE_PROCESS: string[][] = [
  ...COMMANDS.flatMap((command) => [
    [command, '--help'],
    ['help', command],
  ]),
  ['version'],
  ...MISTYPED.map(([args]) => args),
  ['tail', '--completely-different'],
  ['listen', '--forward-to'],
  ['listen', '--token', TOKEN],
  ['replay', '--to', 'http://127.0.0.1:9/'],
  ['export', '--since', 'yesterday', '--token', TOKEN],
  ['export', '--since', '2026-02-30', '--token', TOKEN],
  ['tail', '--after', '-1'],
  ['serve', '--port', '99999'],
];
const results = new Map<string, CliResult>();

beforeAll(async () => {
  const ran = await runCliInOneProcess(IN_ONE_PROCESS);
  IN_ONE_PROCESS.forEach((args, n) => {
    const result = ran[n];
    if (result !== undefined) results.set(args.join('\0'), result);
  });
});

/** What `reception ...args` printed and exited with, run in one process with the others. */
function inOne(args: string[]): CliResult {
  const result = results.get(args.join('\0'));
  if (result === undefined) throw new Error(`not run: reception ${args.join(' ')}`);
  return result;
}

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
    const { code, stdout } = inOne([command, '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`reception ${command}: `);
    expect(stdout).toContain('Flags:');
    expect(stdout).toMatch(new RegExp(`Examples:\\n  reception ${command}`));
    expect(inOne(['help', command]).stdout).toBe(stdout);
  });

  it('lists every flag a command accepts in its help', async () => {
    const { stdout } = inOne(['listen', '--help']);
    for (const flag of ['--forward-to', '--source', '--state', '--timeout', '--url', '--token']) expect(stdout).toContain(flag);
    const retry = inOne(['retry', '--help']).stdout;
    for (const flag of ['--failed', '--destination', '--source', '--since', '--until', '--url', '--token'])
      expect(retry).toContain(flag);
    const forwards = inOne(['forwards', '--help']).stdout;
    for (const flag of ['--status', '--destination', '--source', '--limit', '--json']) expect(forwards).toContain(flag);
    const serve = inOne(['serve', '--help']).stdout;
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
  for (const { code, stdout } of [await runCli(['--version']), inOne(['version'])]) {
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

  it('a mistyped command after flags: unknown, with the near one, and no server started', async () => {
    for (const args of [
      ['--token', TOKEN, 'forwrds'],
      [`--token=${TOKEN}`, 'forwrds'],
      ['--url', 'http://127.0.0.1:9', '--token', TOKEN, 'forwrds'],
    ]) {
      const { code, stderr, stdout } = await runCli(args);
      expect(code, args.join(' ')).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toContain('unknown command "forwrds" (did you mean "forwards"?)');
      expect(stderr).toContain('reception --help');
    }
    // A known command after flags it does not take: its own parser names the flag.
    const known = await runCli(['--port', '8080', 'tail']);
    expect(known.code).toBe(2);
    expect(known.stderr).toContain('unknown flag --port for "reception tail"');
  });

  it("an unknown flag, named, with the command's help to read", async () => {
    const { code, stderr } = await runCli(['tail', '--sauce', 'x']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown flag --sauce for "reception tail" (did you mean --source?)');
    expect(stderr).toContain('reception tail --help');
  });

  it('a mistyped flag gets the one meant, as a mistyped config key does; a flag far from any gets none', async () => {
    for (const [args, hint] of MISTYPED) {
      const { code, stderr } = inOne(args);
      expect(code).toBe(2);
      expect(stderr).toContain(hint);
    }
    const far = inOne(['tail', '--completely-different']);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('unknown flag --completely-different for "reception tail".');
  });

  it('a flag without its value, a missing argument, a bad value', async () => {
    const missingValue = inOne(['listen', '--forward-to']);
    expect(missingValue.code).toBe(2);
    expect(missingValue.stderr).toContain('--forward-to needs a value');

    const noTarget = inOne(['listen', '--token', TOKEN]);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain('--forward-to URL is required');

    const noId = inOne(['replay', '--to', 'http://127.0.0.1:9/']);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain('reception replay <id or seq>');

    const badSince = inOne(['export', '--since', 'yesterday', '--token', TOKEN]);
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toContain('--since');
    // Date.parse would take February 30th as March 2nd.
    const noSuchDay = inOne(['export', '--since', '2026-02-30', '--token', TOKEN]);
    expect(noSuchDay.code).toBe(2);
    expect(noSuchDay.stderr).toContain('--since: expected an RFC 3339 time');

    const negative = inOne(['tail', '--after', '-1']);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('a value that begins with "-" is written --after=<value>');

    const badPort = inOne(['serve', '--port', '99999']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--port: expected a whole number from 0 to 65535, got "99999"');
  });
});
