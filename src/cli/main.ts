#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { ApiError } from './api-client.js';
import { describeError } from './backoff.js';
import { checkConfigSpec, runCheckConfig } from './check-config.js';
import { destinationsSpec, runDestinations } from './destinations.js';
import { exportSpec, runExport } from './export.js';
import { forwardsSpec, runForwards } from './forwards.js';
import { importSpec, runImport } from './import.js';
import { issuesSpec, runIssues } from './issues.js';
import { listenSpec, runListen } from './listen.js';
import { flushOut } from './process-io.js';
import { replaySpec, runReplay } from './replay.js';
import { retrySpec, runRetry } from './retry.js';
import { runServe, serveSpec } from './serve.js';
import { runTail, tailSpec } from './tail.js';
import { runTransform, transformSpec } from './transform.js';
import { runTrigger, triggerSpec } from './trigger.js';
import { CliError, parseCommand, UsageError, type CommandSpec } from './usage.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';

/**
 * `reception`: the package's command line. Exit codes: 0 done, 1 the
 * command failed (server unreachable, token refused, target error),
 * 2 the command line is wrong (unknown command or flag, bad value).
 */

interface Command {
  spec: CommandSpec;
  /** Resolves with the exit code, or undefined when the process keeps running (serve). */
  run: (argv: string[]) => Promise<number | undefined>;
}

const COMMANDS: Command[] = [
  { spec: serveSpec, run: runServe },
  { spec: tailSpec, run: runTail },
  { spec: listenSpec, run: runListen },
  { spec: replaySpec, run: runReplay },
  { spec: exportSpec, run: runExport },
  { spec: forwardsSpec, run: runForwards },
  { spec: retrySpec, run: runRetry },
  { spec: destinationsSpec, run: runDestinations },
  { spec: issuesSpec, run: runIssues },
  { spec: checkConfigSpec, run: runCheckConfig },
  { spec: importSpec, run: runImport },
  { spec: triggerSpec, run: runTrigger },
  { spec: transformSpec, run: runTransform },
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.spec.name.length)) + 2;
  return [
    'reception: a self-hosted webhook receiver, and tools to watch, forward and export its inbox.',
    '',
    'Usage:',
    '  reception [serve] [flags]          run the server (serve is the default)',
    '  reception <command> [flags]',
    '  reception <command> --help         every flag of a command, with examples',
    '  reception version                  the version (also --version)',
    '',
    'From a clone, after npm ci and npm run build (npm start builds too): npx reception <command>.',
    'Under npx, write "npx reception help" and "npx reception version": npx takes --help and --version for itself.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.spec.name.padEnd(width)}${c.spec.summary}`),
    '',
    'The client commands (all but serve, check-config and import) talk to a server given by --url and --token,',
    'or RECEPTION_URL (else http://127.0.0.1:$RECEPTION_PORT, else http://127.0.0.1:8080) and RECEPTION_TOKEN.',
    'Flags go before the command or after it: reception --url 8080 --token T forwards.',
    '',
    'Examples:',
    ...COMMANDS.map((c) => `  ${c.spec.examples[0] ?? `reception ${c.spec.name}`}`),
    '',
    'Exit codes: 0 done, 1 the command failed, 2 the command line is wrong.',
    '',
  ].join('\n');
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

async function main(argv: string[]): Promise<number | undefined> {
  const first = argv[0];
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = COMMANDS.find((c) => c.spec.name === argv[1]);
    if (first === 'help' && topic !== undefined) return topic.run(['--help']);
    process.stdout.write(overview());
    return 0;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    process.stdout.write(`reception ${version()}\n`);
    return 0;
  }
  const hoisted = first?.startsWith('-') === true ? commandAfterFlags(argv) : undefined;
  if (hoisted !== undefined) return runCommand(hoisted.command.spec.name, hoisted.command.run, hoisted.argv);
  // Flags alone (or nothing) mean serve; a word among them that is no flag's value is a command, known or not.
  const at = first === undefined || first.startsWith('-') ? commandWordAfterFlags(argv) : 0;
  if (at === undefined) return runCommand(serveSpec.name, runServe, argv);
  const word = argv[at] ?? '';
  const command = COMMANDS.find((c) => c.spec.name === word);
  if (command === undefined) throw unknownCommand(word);
  // A known command after flags that are not all its own: its parser names the one it does not take.
  return runCommand(command.spec.name, command.run, [...argv.slice(0, at), ...argv.slice(at + 1)]);
}

function unknownCommand(word: string): UsageError {
  const names = COMMANDS.map((c) => c.spec.name);
  const near = nearestWithin(word, names, 2);
  return new UsageError(
    `unknown command "${escapeForTerminal(word)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}. Commands: ${[...names, 'version', 'help'].join(', ')}.`,
  );
}

/** Every command's flags that take a value, as written: `--token`, `-q`. */
const VALUE_FLAGS = new Set(
  COMMANDS.flatMap((c) =>
    c.spec.flags
      .filter((flag) => flag.type === 'string')
      .flatMap((flag) => [`--${flag.name}`, ...(flag.short === undefined ? [] : [`-${flag.short}`])]),
  ),
);

/**
 * The index of the first word that is neither a flag nor the value of a flag
 * that takes one (of any command): `forwrds` in `--token x forwrds`. None
 * (undefined) when the words are flags alone, or after `--`.
 */
function commandWordAfterFlags(argv: string[]): number | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (word === '--') return undefined;
    if (!word.startsWith('-') || word === '-') return i;
    if (VALUE_FLAGS.has(word)) i++;
  }
  return undefined;
}

/**
 * Flags before the command (`reception --token x forwards`): the first
 * command name that comes after nothing but flags of that very command
 * (with their values) gets them, ahead of its own arguments, so that one
 * written after the command wins. A word that is a flag's value is not a
 * command (`--token tail forwards` runs forwards with the token "tail").
 * No command name there: `commandWordAfterFlags` looks for a mistyped one.
 */
function commandAfterFlags(argv: string[]): { command: Command; argv: string[] } | undefined {
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (word === '--') return undefined;
    const command = COMMANDS.find((c) => c.spec.name === word);
    if (command === undefined) continue;
    const before = argv.slice(0, i);
    if (onlyFlagsOf(command.spec, before)) return { command, argv: [...before, ...argv.slice(i + 1)] };
  }
  return undefined;
}

/** Whether `args` parse as flags of the command (with their values) and nothing else. */
function onlyFlagsOf(spec: CommandSpec, args: string[]): boolean {
  try {
    return parseCommand({ ...spec, positionals: 0 }, args).positionals.length === 0;
  } catch {
    return false;
  }
}

/** Runs a command; a usage mistake found deep inside (a bad flag value) is reported with that command's help. */
async function runCommand(name: string, run: Command['run'], argv: string[]): Promise<number | undefined> {
  try {
    return await run(argv);
  } catch (error) {
    if (error instanceof UsageError && error.command === undefined) throw new UsageError(error.message, name);
    throw error;
  }
}

/** Error messages carry what a server answered and what was typed: escaped like any payload. */
function fail(error: unknown): number {
  if (error instanceof UsageError) {
    const help = error.command === undefined ? 'reception --help' : `reception ${error.command} --help`;
    process.stderr.write(`reception: ${escapeForTerminal(error.message)}\nRun "${help}" for usage.\n`);
    return 2;
  }
  if (error instanceof ApiError || error instanceof CliError) {
    process.stderr.write(`reception: ${escapeForTerminal(error.message)}\n`);
    return 1;
  }
  process.stderr.write(`reception: ${escapeForTerminal(describeError(error))}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  async (code) => {
    if (code === undefined) return;
    await flushOut();
    process.exit(code);
  },
  async (error: unknown) => {
    const code = fail(error);
    await flushOut();
    process.exit(code);
  },
);
