import { parseArgs } from 'node:util';
import { nearestWithin } from '../platform/text/edit-distance.js';

/**
 * The shape of every command: its flags, its help text and its examples.
 * Parsing is `node:util` parseArgs in strict mode; its errors become a
 * `UsageError` (exit code 2) that names the flag.
 */

/** A mistake in the command line itself: printed with a hint, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure while running a command (server unreachable, token refused...): exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export interface FlagSpec {
  name: string;
  type: 'string' | 'boolean';
  /** Placeholder shown in help, e.g. `URL`. */
  value?: string;
  short?: string;
  help: string;
  /** The environment variable read when the flag is absent. */
  env?: string;
  /** The value used when neither the flag nor its variable is set, as help shows it. */
  default?: string;
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Usage lines without the leading `reception `. */
  usage: string[];
  description: string;
  flags: FlagSpec[];
  /** How many positional arguments the command takes at most. */
  positionals?: number;
  examples: string[];
}

export type FlagValues = Record<string, string | boolean | undefined>;

export interface ParsedCommand {
  values: FlagValues;
  positionals: string[];
}

const HELP_FLAG: FlagSpec = { name: 'help', type: 'boolean', short: 'h', help: 'Show this help.' };

/** Parses argv for one command; unknown flags, missing values and extra arguments throw a UsageError. */
export function parseCommand(spec: CommandSpec, argv: string[]): ParsedCommand {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const flag of [...spec.flags, HELP_FLAG]) {
    options[flag.name] = flag.short === undefined ? { type: flag.type } : { type: flag.type, short: flag.short };
  }
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(describeParseError(error, spec), spec.name);
  }
  const values: FlagValues = {};
  for (const [key, value] of Object.entries(parsed.values)) {
    values[key] = Array.isArray(value) ? value[value.length - 1] : value;
  }
  if (values.help !== true && parsed.positionals.length > (spec.positionals ?? 0)) {
    const extra = parsed.positionals[spec.positionals ?? 0] ?? '';
    throw new UsageError(`unexpected argument "${extra}" for "reception ${spec.name}".`, spec.name);
  }
  return { values, positionals: parsed.positionals };
}

function describeParseError(error: unknown, spec: CommandSpec): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const flag = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag !== undefined) {
    const meant = flagMeant(flag, spec);
    return `unknown flag ${flag} for "reception ${spec.name}"${meant === undefined ? '' : ` (did you mean ${meant}?)`}.`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) {
    const known = spec.flags.find((f) => `--${f.name}` === flag || `-${f.short ?? ''}` === flag);
    if (known?.type === 'boolean') return `${flag} takes no value.`;
    // A value that begins with "-" reads as a flag: `--after -1` ends here too.
    return `${flag} needs a value${known?.value === undefined ? '' : ` (${known.value})`}; a value that begins with "-" is written ${flag}=<value>.`;
  }
  return message;
}

/**
 * The flag that `typed` probably misspells: the nearest name within two
 * edits (a third for long names), its dashes ignored (`-source` and
 * `--sourec` both mean `--source`), or the only flag that starts with it.
 */
function flagMeant(typed: string, spec: CommandSpec): string | undefined {
  const name = typed.replace(/^-+/, '').split('=')[0] ?? '';
  if (name === '' || name.length > 40) return undefined;
  const names = [...spec.flags, HELP_FLAG].map((f) => f.name);
  const near = nearestWithin(name, names, name.length > 8 ? 3 : 2);
  if (near !== undefined) return `--${near}`;
  const started = names.filter((candidate) => candidate.startsWith(name.toLowerCase()));
  return started.length === 1 ? `--${started[0] ?? ''}` : undefined;
}

/** The string value of a flag, else its environment variable, else undefined (empty counts as unset). */
export function stringFlag(values: FlagValues, name: string, env?: string): string | undefined {
  const value = values[name];
  if (typeof value === 'string') return value;
  if (env !== undefined) {
    const fromEnv = process.env[env];
    if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim();
  }
  return undefined;
}

export function booleanFlag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}

/** A whole number flag within bounds, or the fallback when absent. */
export function integerFlag(values: FlagValues, name: string, fallback: number, min: number, max: number): number {
  const text = stringFlag(values, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name}: expected a whole number from ${min} to ${max}, got "${text}".`);
  }
  return value;
}

/** Help for one command, as printed by `reception <command> --help`. */
export function renderHelp(spec: CommandSpec): string {
  const lines: string[] = [];
  lines.push(`reception ${spec.name}: ${spec.summary}`, '', 'Usage:');
  for (const usage of spec.usage) lines.push(`  reception ${usage}`);
  lines.push('', ...wrap(spec.description, 78), '', 'Flags:');
  const flags = [...spec.flags, HELP_FLAG];
  const labels = flags.map((f) => {
    const short = f.short === undefined ? '    ' : `-${f.short}, `;
    return `${short}--${f.name}${f.value === undefined ? '' : ` ${f.value}`}`;
  });
  const width = Math.min(30, Math.max(...labels.map((l) => l.length)) + 2);
  flags.forEach((flag, i) => {
    const label = labels[i] ?? '';
    const help = `${flag.help}${helpNote(flag)}`;
    const body = wrap(help, 76 - width);
    if (label.length + 2 > width) {
      lines.push(`  ${label}`);
      for (const line of body) lines.push(`  ${' '.repeat(width)}${line}`);
    } else {
      body.forEach((line, j) => lines.push(`  ${j === 0 ? label.padEnd(width) : ' '.repeat(width)}${line}`));
    }
  });
  lines.push('', 'Examples:');
  for (const example of spec.examples) lines.push(`  ${example}`);
  return `${lines.join('\n')}\n`;
}

/** ` [default 8080; env RECEPTION_PORT]`: what a flag falls back on, if anything. */
function helpNote(flag: FlagSpec): string {
  const notes = [
    ...(flag.default === undefined ? [] : [`default ${flag.default}`]),
    ...(flag.env === undefined ? [] : [`env ${flag.env}`]),
  ];
  return notes.length === 0 ? '' : ` [${notes.join('; ')}]`;
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    if (out.length > 0) out.push('');
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((w) => w.length > 0)) {
      if (line.length > 0 && line.length + 1 + word.length > width) {
        out.push(line);
        line = word;
      } else {
        line = line.length === 0 ? word : `${line} ${word}`;
      }
    }
    out.push(line);
  }
  return out;
}
