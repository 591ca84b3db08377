import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { TSchema } from 'typebox';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { TRANSFORM_NAME, TransformConfigSchema, type TransformConfig } from '../transforms/transform-config-schema.js';
import { DEFAULT_LIMITS, Sandbox, TransformCompileError } from '../transforms/sandbox.js';
import { prepareTransformEngine } from '../transforms/quickjs-engine.js';
import { transformVersion, type TransformDefinition, type TransformUser } from '../transforms/transforms.js';
import type { ConfigFile } from './source-config-schema.js';
import { resolveAlerts } from '../alerts/alerts.js';
import { ISSUES_SOURCE } from '../alerts/issue-event.js';

type ErrorsOf = (schema: TSchema, data: unknown, prefix: string) => string[];

/** The largest transform module read: code, not data. */
const MAX_CODE_BYTES = 1024 * 1024;

/** `transforms.slack-text`, or `transforms["a b"]` for a name that would not read as one key. */
function transformKey(name: string): string {
  return /^[\w.-]+$/.test(name) ? `transforms.${name}` : `transforms[${escapeJsonForTerminal(JSON.stringify(name))}]`;
}

/**
 * Checks the shape of `transforms` (each on its own, so that every bad one is
 * named), pushing the problems found; answers the names that routes may use.
 * Whether the code compiles is checked once the file is read
 * (`compileTransforms`).
 */
export function transformShapeProblems(transforms: unknown, problems: string[], errorsOf: ErrorsOf): Set<string> {
  const names = new Set<string>();
  if (transforms === undefined) return names;
  if (typeof transforms !== 'object' || transforms === null || Array.isArray(transforms)) {
    problems.push('transforms: expected an object that maps transform names to { file } or { code }');
    return names;
  }
  for (const [name, transform] of Object.entries(transforms)) {
    names.add(name);
    const at = transformKey(name);
    if (!TRANSFORM_NAME.test(name)) {
      problems.push(`${at}: a transform's name is 1 to 64 letters, digits, ".", "_" or "-", beginning with a letter or digit`);
    }
    const shape = errorsOf(TransformConfigSchema, transform, at);
    if (shape.length > 0) {
      problems.push(...shape);
      continue;
    }
    const { file, code } = transform as TransformConfig;
    if ((file === undefined) === (code === undefined)) {
      problems.push(`${at}: takes either "file" (a module beside the config file) or "code" (the module inline), one of the two`);
    }
  }
  return names;
}

/** Reads each transform's `file` (relative to the config file's folder) into its `code`; answers the problems. */
export function readTransformFiles(config: ConfigFile, folder: string): string[] {
  const problems: string[] = [];
  for (const [name, transform] of Object.entries(config.transforms ?? {})) {
    if (transform.file === undefined) continue;
    const path = isAbsolute(transform.file) ? transform.file : resolve(folder, transform.file);
    try {
      const bytes = readFileSync(path);
      if (bytes.length > MAX_CODE_BYTES)
        problems.push(`${transformKey(name)}.file: larger than 1 MiB (a transform is code, not data)`);
      else transform.code = bytes.toString('utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      problems.push(`${transformKey(name)}.file: cannot read ${escapeJsonForTerminal(JSON.stringify(path))} (${code})`);
    }
  }
  return problems;
}

/**
 * Compiles each transform of a loaded config (its code read already) as the
 * server will run it: a syntax error, a module that throws or loops as it
 * loads, or no default export function is a problem naming the transform and,
 * where QuickJS says it, the line. The engine is loaded only for a file that
 * has transforms.
 */
export async function compileTransforms(config: ConfigFile): Promise<string[]> {
  const entries = Object.entries(config.transforms ?? {});
  if (entries.length === 0) return [];
  await prepareTransformEngine();
  const problems: string[] = [];
  for (const [name, transform] of entries) {
    const where = transform.file === undefined ? `${transformKey(name)}.code` : `${transformKey(name)}.file`;
    try {
      Sandbox.compile(name, transform.code ?? '', limitsOf(transform)).dispose();
    } catch (error) {
      if (!(error instanceof TransformCompileError)) throw error;
      const line =
        error.line === undefined
          ? ''
          : ` (${transform.file ?? 'code'} line ${error.line}${error.column === undefined ? '' : `, column ${error.column}`})`;
      problems.push(`${where}: ${escapeJsonForTerminal(error.message)}${line}`);
    }
  }
  return problems;
}

function limitsOf(transform: TransformConfig): TransformDefinition['limits'] {
  return { timeoutMs: transform.timeoutMs ?? DEFAULT_LIMITS.timeoutMs, memoryMb: transform.memoryMb ?? DEFAULT_LIMITS.memoryMb };
}

/** The transforms of a loaded config, as the server runs them. */
export function transformDefinitions(config: ConfigFile | undefined): TransformDefinition[] {
  return Object.entries(config?.transforms ?? {}).map(([name, transform]) => {
    const code = transform.code ?? '';
    return { name, version: transformVersion(code), code, limits: limitsOf(transform) };
  });
}

/** The routes that use each transform, by transform name; an `alerts.notify` entry is a route of the source `reception:issues`. */
export function transformUsers(config: ConfigFile | undefined): Map<string, TransformUser[]> {
  const users = new Map<string, TransformUser[]>();
  for (const [source, rules] of Object.entries(config?.sources ?? {})) {
    for (const route of rules.forward ?? []) {
      if (route.transform === undefined) continue;
      users.set(route.transform, [...(users.get(route.transform) ?? []), { source, destination: route.to }]);
    }
  }
  for (const { destination, transform } of resolveAlerts(config?.alerts).notify) {
    if (transform === null) continue;
    users.set(transform, [...(users.get(transform) ?? []), { source: ISSUES_SOURCE, destination }]);
  }
  return users;
}
