import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TSchema } from 'typebox';
import Value from 'typebox/value';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { decodeSourceName } from '../platform/http/source-name.js';
import { createVerifier } from '../verify/create-verifier.js';
import { VerifyConfigError } from '../verify/verifier.js';
import { nearestWithin, nearName } from '../platform/text/edit-distance.js';
import { childPath, mayName, settingNamed } from './key-names.js';
import { problemPath } from './config-positions.js';
import { readYaml, type LocatedProblem, type ReadYaml } from './yaml-problems.js';
import {
  ConfigFileSchema,
  SourceConfigSchema,
  type ConfigFile,
  type SourceConfig,
  type VerifyConfig,
} from './source-config-schema.js';
import { destinationProblems, pullDestinationNames, routeProblems } from './destination-config.js';
import { bodyAndAnswerProblems } from './body-and-answer-rules.js';
import { compileTransforms, readTransformFiles, transformShapeProblems } from './transform-config.js';
import { alertsProblems } from './alerts-config.js';
import { ISSUES_SOURCE } from '../alerts/issue-event.js';

export class ConfigFileError extends Error {
  /** Each problem in words, as the message lists it (without its place in the file). */
  readonly problems: string[];
  /** The problems with their places, and the summary: what it was made of (a reload's thread hands them back). */
  readonly located: LocatedProblem[];
  readonly summary: string;

  /**
   * Each problem is listed as `file:line:column: problem` when its place in
   * the file is known (the form that editors and terminals open at the
   * place), else as the problem alone.
   */
  constructor(
    readonly file: string,
    located: ReadonlyArray<LocatedProblem | string>,
    summary = `${file} is not a valid Reception config`,
  ) {
    const problems = located.map((p) => (typeof p === 'string' ? { problem: p } : p));
    const lines = problems.map(({ problem, at }) => (at === undefined ? problem : `${file}:${at.line}:${at.column}: ${problem}`));
    super(`${summary}:\n${lines.map((line) => `  - ${line}`).join('\n')}`);
    this.name = 'ConfigFileError';
    this.problems = problems.map((p) => p.problem);
    this.located = problems;
    this.summary = summary;
  }
}

/** Reads and validates the config file (YAML or JSON); throws ConfigFileError naming each bad key. */
export function loadConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigFileError(file, [unreadable(error)], `cannot read the config file ${file}`);
  }
  const read = readYaml(text);
  if ('problems' in read) throw new ConfigFileError(file, read.problems);
  const data = read.data ?? {};
  const problems = validateConfig(data);
  if (problems.length > 0) {
    throw new ConfigFileError(
      file,
      problems.map((problem) => {
        const at = read.locate(problemPath(problem));
        return at === undefined ? { problem } : { problem, at };
      }),
    );
  }
  // Each transform's file, read beside the config file: its code goes with the config from here on.
  const unread = readTransformFiles(data as ConfigFile, dirname(file));
  if (unread.length > 0)
    throw new ConfigFileError(
      file,
      unread.map((problem) => located(problem, read.locate)),
    );
  return data as ConfigFile;
}

/** A problem with its place in the file, when the key path it begins with is there. */
export function located(problem: string, locate: ReadYaml['locate']): LocatedProblem {
  const at = locate(problemPath(problem));
  return at === undefined ? { problem } : { problem, at };
}

/** Why a file cannot be read, in words, with the system's code. */
function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === 'ENOENT'
      ? 'there is no such file: check the path'
      : code === 'EACCES'
        ? 'permission denied: this user may not read it'
        : code === 'EISDIR'
          ? 'it is a directory: name the file itself'
          : 'the system refused to read it';
  return code === undefined ? `${reason} (${String(error)})` : `${reason} (${code})`;
}

/** Every problem with a parsed config, each naming its key path (e.g. `sources.stripe.verify.scheme`). */
export function validateConfig(data: unknown): string[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return ['(top level): expected an object with "sources" (and optionally "strict" and "destinations")'];
  }
  const { sources, destinations, transforms, alerts, ...top } = data as {
    sources?: unknown;
    destinations?: unknown;
    transforms?: unknown;
    alerts?: unknown;
  };
  const problems = errorsOf(ConfigFileSchema, { ...top, sources: {}, destinations: {} }, '');
  const destinationNames = destinationProblems(destinations, problems, errorsOf);
  const transformNames = transformShapeProblems(transforms, problems, errorsOf);
  const pullNames = pullDestinationNames(destinations);
  alertsProblems(
    alerts,
    { destinations: destinationNames, pullDestinations: pullNames, transforms: transformNames },
    problems,
    errorsOf,
  );
  if (sources === undefined) return problems;
  if (typeof sources !== 'object' || sources === null || Array.isArray(sources)) {
    return [...problems, 'sources: expected an object that maps source names to their rules'];
  }
  // Each source on its own, so that every bad source is named (a record
  // stops at its first bad entry), and the rules that the schema cannot
  // express are checked for every source whose shape is right.
  for (const [name, source] of Object.entries(sources)) {
    const at = sourceKey(name);
    try {
      decodeSourceName(encodeURIComponent(name));
    } catch {
      problems.push(`${at}: ${quoted(name)} is not a valid source name (1 to 128 characters, no "/" or control characters)`);
    }
    if (name === ISSUES_SOURCE) problems.push(`${at}: ${quoted(name)} is reserved for Reception's own notifications of issues`);
    const shapeProblems = errorsOf(SourceConfigSchema, source, at);
    if (shapeProblems.length > 0) problems.push(...shapeProblems);
    else
      problems.push(
        ...ruleProblems(at, source as SourceConfig),
        ...routeProblems(at, source as SourceConfig, destinationNames, transformNames, pullNames),
      );
  }
  return problems;
}

/** What a source of the right shape may still get wrong: settings that only some schemes or handshakes take or need. */
function ruleProblems(at: string, source: SourceConfig): string[] {
  const problems: string[] = [];
  const verify = source.verify;
  if (verify?.scheme === 'twilio' && verify.publicUrl === undefined) {
    problems.push(`${at}.verify.publicUrl: the twilio scheme needs the public URL Twilio posts to`);
  }
  if (verify?.scheme === 'hmac' && verify.header === undefined) {
    problems.push(`${at}.verify.header: the hmac scheme needs the name of the signature header`);
  }
  if (verify?.scheme !== 'hmac' && verify !== undefined) {
    for (const key of ['header', 'algorithm', 'encoding', 'prefix'] as const) {
      if (verify[key] !== undefined) problems.push(`${at}.verify.${key}: only the hmac scheme takes "${key}"`);
    }
  }
  if (verify !== undefined && verify.scheme !== 'twilio' && verify.publicUrl !== undefined) {
    problems.push(`${at}.verify.publicUrl: only the twilio scheme takes "publicUrl"`);
  }
  // What only the scheme itself can judge (a Twilio URL with a query, a secret that is not base64...):
  // a file that passes here also starts.
  const verifyProblem =
    verify === undefined || problems.some((p) => p.startsWith(`${at}.verify`)) ? undefined : schemeProblem(verify);
  if (verifyProblem !== undefined) problems.push(`${at}.${verifyProblem}`);
  const handshake = source.handshake;
  if (handshake?.type === 'meta' && handshake.verifyToken === undefined) {
    problems.push(`${at}.handshake.verifyToken: the meta handshake needs the verify token set in the app's webhook settings`);
  }
  if (handshake?.type === 'x' && handshake.secret === undefined) {
    problems.push(`${at}.handshake.secret: the x handshake needs the app's consumer secret`);
  }
  if (handshake?.type === 'zoom' && handshake.secret === undefined && verify?.scheme !== 'zoom') {
    problems.push(`${at}.handshake.secret: the zoom handshake needs the secret token (or verify with the zoom scheme)`);
  }
  if (handshake?.verifyToken !== undefined && handshake.type !== 'meta') {
    problems.push(`${at}.handshake.verifyToken: only the meta handshake takes "verifyToken"`);
  }
  if (handshake?.secret !== undefined && handshake.type !== 'x' && handshake.type !== 'zoom') {
    problems.push(
      `${at}.handshake.secret: only the x and zoom handshakes take "secret"${handshake.type === 'slack' ? " (Slack's signing secret goes under verify)" : ''}`,
    );
  }
  problems.push(...eventTypeProblems(at, source));
  if (source.onFailure === 'keep' && verify === undefined) {
    problems.push(`${at}.onFailure: "keep" only means something for a source that verifies signatures`);
  }
  problems.push(...bodyAndAnswerProblems(at, source));
  return problems;
}

/** Schemes whose deliveries carry their event type where the scheme says (CONTRACT 8): a source's own setting is not read. */
const TYPED_SCHEMES: ReadonlySet<string> = new Set(['github', 'stripe', 'standard-webhooks', 'shopify', 'slack', 'zoom']);

function eventTypeProblems(at: string, source: SourceConfig): string[] {
  const setting = source.eventType;
  if (setting === undefined) return [];
  if ((setting.header === undefined) === (setting.body === undefined)) {
    return [`${at}.eventType: name either a header ({ header: X-Event }) or a body field ({ body: data.kind }), one of the two`];
  }
  const scheme = source.verify?.scheme;
  if (scheme !== undefined && TYPED_SCHEMES.has(scheme)) {
    return [`${at}.eventType: the ${scheme} scheme says where the event type is, so this setting would not be read; remove it`];
  }
  return [];
}

function schemeProblem(verify: VerifyConfig): string | undefined {
  try {
    createVerifier(verify);
    return undefined;
  } catch (error) {
    if (error instanceof VerifyConfigError) return error.message;
    throw error;
  }
}

/** A source's key path in messages: `sources.stripe`, or `sources[".."]` for a name that would not read as one key. */
function sourceKey(name: string): string {
  return /^[\w-]+$/.test(name) ? `sources.${name}` : `sources[${quoted(name)}]`;
}

/** A name from the file in quotes, with every character a terminal would act on escaped (`check-config` prints it). */
function quoted(name: string): string {
  return escapeJsonForTerminal(JSON.stringify(name));
}

const UNKNOWN_KEY = 'unknown key (check the spelling; see docs/config.md)';

/**
 * What is said of an unknown key: its path and the problem, or for a key that
 * may be a secret, its parent and length only, with the settings that the
 * parent takes (`settings`, when known).
 */
function unknownKeyProblem(prefix: string, parent: string, key: string, settings: readonly string[]): [string, string] {
  const parentPath = [prefix, parent].filter((p) => p !== '').join('.');
  if (!mayName(parentPath, key)) {
    const known = settings.length === 0 ? 'see docs/config.md for the settings' : `the settings here are ${settings.join(', ')}`;
    return [
      parentPath || '(top level)',
      `an unknown key of ${key.length} character${key.length === 1 ? '' : 's'} (not shown: it may be a secret; ${known})`,
    ];
  }
  return [childPath(parentPath, key), unknownKeyMessage(key, settings)];
}

/**
 * A misspelling of one of the settings here first (`secret` under `verify`
 * means `secrets`, though `secret` is a setting of the X handshake), then of
 * any setting; a setting of another place is said to be one.
 */
function unknownKeyMessage(key: string, settings: readonly string[]): string {
  const here = nearName(
    key,
    settings.filter((name) => name !== key),
  );
  if (here !== undefined) return `unknown key (did you mean "${here}"? see docs/config.md)`;
  const setting = settingNamed(key);
  if (setting === key) {
    return settings.length === 0
      ? 'not a setting of this place (see docs/config.md)'
      : `not a setting of this place; the settings here are ${settings.join(', ')} (see docs/config.md)`;
  }
  return setting === undefined ? UNKNOWN_KEY : `unknown key (did you mean "${setting}"? see docs/config.md)`;
}

export function errorsOf(schema: TSchema, data: unknown, prefix: string): string[] {
  /** Lines by the path they are about, one per path (several unnamed unknown keys of one parent: one per length). */
  const lines = new Map<string, string>();
  const set = (path: string, message: string, key = path): void => {
    lines.set(key, `${path}: ${message}`);
  };
  const allowed = new Map<string, string[]>();
  const join = (path: string): string => [prefix, path].filter((p) => p !== '').join('.') || '(top level)';
  const unknown = (parent: string, key: string, settings: readonly string[] = []): void => {
    const [path, message] = unknownKeyProblem(prefix, parent, key, settings);
    set(path, message, `${path}\u0000${message}`);
  };
  for (const error of Value.Errors(schema, data)) {
    const parts = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
    const path = parts.join('.');
    const params = error.params as { additionalProperties?: string[]; allowedValue?: unknown; requiredProperties?: string[] };
    if (error.keyword === 'additionalProperties') {
      for (const key of params.additionalProperties ?? []) unknown(path, key, settingsAt(schema, error.schemaPath));
    } else if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')) {
      // TypeBox reports some unknown keys only this way, one per key (seen with
      // values that hold YAML aliases of themselves), and others both ways.
      unknown(
        parts.slice(0, -1).join('.'),
        parts.at(-1) ?? '',
        settingsAt(schema, error.schemaPath.slice(0, -'/additionalProperties'.length)),
      );
    } else if (error.keyword === 'required') {
      for (const key of params.requiredProperties ?? []) set(join(path === '' ? key : `${path}.${key}`), 'is required');
    } else if (error.keyword === 'enum') {
      const values = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
      allowed.set(
        path,
        values.map((value) => JSON.stringify(value)),
      );
    } else if (error.keyword === 'const') {
      allowed.set(path, [...(allowed.get(path) ?? []), JSON.stringify(params.allowedValue)]);
    } else if (error.keyword !== 'anyOf' && error.keyword !== 'boolean' && !lines.has(join(path))) {
      set(join(path), `${error.message}, got ${shown(path, valueAt(data, error.instancePath))}`);
    }
  }
  for (const [path, values] of allowed) {
    const value = valueAt(data, `/${path.split('.').join('/')}`);
    set(join(path), `expected one of ${values.join(', ')}, got ${shown(path, value)}${meantValue(path, value, values)}`);
  }
  return [...lines.values()];
}

/** The property names of the object schema at `schemaPath` (`#/properties/sources/…`) inside `schema`. */
function settingsAt(schema: TSchema, schemaPath: string): string[] {
  let node: unknown = schema;
  for (const part of schemaPath.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return [];
    node = (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  const properties = typeof node === 'object' && node !== null ? (node as { properties?: unknown }).properties : undefined;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}

/**
 * The settings whose values a message may quote: none of them holds a
 * secret. Anything else (`secrets`, `secret`, `verifyToken`, a `publicUrl`
 * that may carry a password, and a secret typed where an object belongs,
 * as in `verify: whsec_…`) is described by its kind and length only.
 */
const QUOTABLE_KEYS = new Set([
  'strict',
  'scheme',
  'type',
  'algorithm',
  'encoding',
  'prefix',
  'header',
  'toleranceSeconds',
  'onFailure',
  'anyJson',
  'accept',
  'status',
  'maxBodyBytes',
  'rateLimit',
  'requests',
  'perSeconds',
  'dedup',
  'pull',
  'timeoutMs',
  'concurrency',
  'ordered',
  'allowPrivateNetwork',
  'retry',
  'breaker',
  'failures',
  'cooldownSeconds',
  'attempts',
  'initialMs',
  'maxMs',
  'maxAgeSeconds',
  'to',
  'subject',
  'exchange',
  'routingKey',
  'stream',
  'maxLen',
  'eventType',
  'body',
  'file',
  'memoryMb',
  'transform',
  'backlogSeconds',
  'notify',
]);

/**
 * A value as a message quotes it: as JSON (cut at 100 characters) under a
 * quotable key, else by kind and length only. `path` is the key path inside
 * the part checked (the file's top level, or one source), never the source's
 * name: a source named `type` is not a setting.
 */
function shown(path: string, value: unknown): string {
  if (path === '' || !QUOTABLE_KEYS.has(settingOf(path))) {
    if (typeof value === 'string') return `a string of ${value.length} characters (not shown: it may be a secret)`;
    if (Array.isArray(value)) return `a list of ${value.length} (not shown: it may hold secrets)`;
    return `${value === null ? 'null' : typeof value} (not shown: it may be a secret)`;
  }
  const json = escapeJsonForTerminal(JSON.stringify(value) ?? String(value));
  return json.length > 100 ? `${json.slice(0, 100)}…` : json;
}

/** The setting a key path is about: its last key that is not a list index (`accept.1` is about `accept`). */
function settingOf(path: string): string {
  return (
    path
      .split('.')
      .filter((part) => !/^\d+$/.test(part))
      .at(-1) ?? ''
  );
}

/**
 * `; did you mean "stripe"?` for a value one or two letters away from one
 * of the allowed ones, where the value may be quoted; else nothing.
 */
function meantValue(path: string, value: unknown, allowedJson: readonly string[]): string {
  if (typeof value !== 'string' || !QUOTABLE_KEYS.has(settingOf(path))) return '';
  const allowed = allowedJson.map((json) => JSON.parse(json) as unknown).filter((v): v is string => typeof v === 'string');
  const meant = nearestWithin(value.toLowerCase(), allowed, 2);
  return meant === undefined || meant === value ? '' : `; did you mean "${meant}"?`;
}

function valueAt(data: unknown, pointer: string): unknown {
  let value: unknown = data;
  for (const part of pointer.split('/').slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return value;
}

/**
 * `loadConfigFile`, then each transform compiled (CONTRACT 10: an invalid
 * transform is a config error): what the server, its reload and
 * `check-config` read.
 */
export async function loadConfigFileChecked(file: string): Promise<ConfigFile> {
  const config = loadConfigFile(file);
  const problems = await compileTransforms(config);
  if (problems.length === 0) return config;
  const read = readYaml(readFileSync(file, 'utf8'));
  throw new ConfigFileError(
    file,
    problems.map((problem) => ('locate' in read ? located(problem, read.locate) : { problem })),
  );
}
