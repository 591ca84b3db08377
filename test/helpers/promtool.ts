import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * `promtool check metrics` for the tests: the real tool where it is
 * installed (.ci/run takes it out of Debian's prometheus package), and the
 * rules it applies, written out here, so that the check runs everywhere.
 */

/** The promtool binary on PATH or in /usr/local/bin, or undefined. */
export function findPromtool(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin']) {
    if (dir === '') continue;
    const candidate = join(dir, 'promtool');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The promtool binary, or undefined after a loud skip; under CI=true a missing promtool is a failure. */
export function requirePromtool(suite: string): string | undefined {
  const promtool = findPromtool();
  if (promtool !== undefined) return promtool;
  const message = "promtool is not installed (.ci/run takes it from Debian's prometheus package)";
  if (process.env.CI === 'true') throw new Error(`${message}. CI needs it for ${suite}.`);
  process.stderr.write(`\n!!! SKIPPING ${suite}: ${message}.\n\n`);
  return undefined;
}

/** `promtool check metrics` on an exposition: its exit code and what it printed. */
export function promtoolCheckMetrics(promtool: string, text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(promtool, ['check', 'metrics'], (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : undefined;
      if (code === undefined) reject(error ?? new Error('promtool did not run'));
      else resolve({ code, output: `${stdout}${stderr}` });
    });
    child.stdin?.end(text);
  });
}

interface Family {
  type: string | undefined;
  help: string | undefined;
  labels: Set<string>;
  samples: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const CAMEL = /[a-z][A-Z]/;
/** Units that promtool wants spelled out (`_seconds`, not `_ms`). */
const ABBREVIATED_UNITS = ['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd'];
/** Units that promtool wants as their base unit. */
const NON_BASE_UNITS = ['minutes', 'hours', 'days', 'weeks', 'bits', 'milliseconds', 'microseconds', 'nanoseconds'];
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** The family a sample line belongs to: a histogram's `_bucket`, `_sum` and `_count` are its own. */
function familyOf(families: Map<string, Family>, name: string): string {
  for (const suffix of ['_bucket', '_sum', '_count', '_created']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = families.get(base)?.type;
    if (type === 'histogram' || type === 'summary') return base;
  }
  return name;
}

/**
 * The problems that `promtool check metrics` (Prometheus' promlint) reports
 * for a text exposition, one line each as promtool words them: a family
 * without HELP or TYPE, a counter not named `_total` and a non-counter named
 * so, histogram and summary suffixes and labels on other types, `:` in a
 * name, camelCase, abbreviated or non-base units, a type in the name; and
 * names or lines that do not parse.
 */
export function promlintProblems(text: string): string[] {
  const problems: string[] = [];
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let found = families.get(name);
    if (found === undefined) {
      found = { type: undefined, help: undefined, labels: new Set(), samples: 0 };
      families.set(name, found);
    }
    return found;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta !== null) {
      const [, kind = '', name = '', rest = ''] = meta;
      if (!METRIC_NAME.test(name)) problems.push(`${name}: not a valid metric name`);
      if (kind === 'HELP') family(name).help = rest;
      else if (TYPES.includes(rest)) family(name).type = rest;
      else problems.push(`${name}: unknown type ${rest}`);
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([^\s{]+)(?:\{(.*)\})? (\S+)(?: \S+)?$/.exec(line);
    if (sample === null) {
      problems.push(`line does not parse: ${line}`);
      continue;
    }
    const [, name = '', labels = '', value = ''] = sample;
    if (!METRIC_NAME.test(name)) problems.push(`${name}: not a valid metric name`);
    // Prometheus reads a value with Go's strconv.ParseFloat, which takes NaN and Inf in any case
    // (prom-client writes `Nan` for a gauge with no data yet, such as the event loop lag's mean at first).
    if (Number.isNaN(Number(value)) && !/^[+-]?(nan|inf|infinity)$/i.test(value))
      problems.push(`${name}: value ${value} is not a number`);
    const owner = family(familyOf(families, name));
    owner.samples += 1;
    for (const [, label = ''] of labels.matchAll(/([^\s=,]+)="(?:[^"\\]|\\.)*"/g)) {
      if (!LABEL_NAME.test(label)) problems.push(`${name}: label ${label} is not a valid label name`);
      owner.labels.add(label);
    }
  }
  for (const [name, { type, help, labels }] of families) {
    if (help === undefined || help.trim() === '') problems.push(`${name} no help text`);
    if (type === undefined) problems.push(`${name} has no TYPE line`);
    const counter = type === 'counter';
    const untyped = type === undefined || type === 'untyped';
    if (counter && !name.endsWith('_total')) problems.push(`${name} counter metrics should have "_total" suffix`);
    if (!counter && !untyped && name.endsWith('_total'))
      problems.push(`${name} non-counter metrics should not have "_total" suffix`);
    if (!untyped) {
      const histogram = type === 'histogram';
      const summary = type === 'summary';
      if (!histogram && name.endsWith('_bucket')) problems.push(`${name} non-histogram metrics should not have "_bucket" suffix`);
      for (const suffix of ['_count', '_sum'])
        if (!histogram && !summary && name.endsWith(suffix))
          problems.push(`${name} non-histogram and non-summary metrics should not have "${suffix}" suffix`);
      if (!histogram && labels.has('le')) problems.push(`${name} non-histogram metrics should not have "le" label`);
      if (!summary && labels.has('quantile')) problems.push(`${name} non-summary metrics should not have "quantile" label`);
    }
    if (name.includes(':')) problems.push(`${name} metric names should not contain ':'`);
    if (CAMEL.test(name)) problems.push(`${name} metric names should be written in 'snake_case' not 'camelCase'`);
    for (const label of labels)
      if (CAMEL.test(label)) problems.push(`${name} label names should be written in 'snake_case' not 'camelCase'`);
    const words = name.toLowerCase().split('_');
    if (words.slice(1).some((word) => ABBREVIATED_UNITS.includes(word)))
      problems.push(`${name} metric names should not contain abbreviated units`);
    const unit = words.find((word) => NON_BASE_UNITS.includes(word));
    if (unit !== undefined) problems.push(`${name} use a base unit instead of "${unit}"`);
    for (const typeName of ['counter', 'gauge', 'histogram', 'summary'])
      if (words.slice(1).includes(typeName)) problems.push(`${name} metric name should not include type '${typeName}'`);
  }
  return problems;
}
