import {
  $and,
  $eq,
  $exists,
  $gt,
  $gte,
  $in,
  $lt,
  $lte,
  $ne,
  $nin,
  $not,
  $or,
  createEqualsOperation,
  createQueryTester,
  type Query,
  // Not 'sift': its index.js copies the exports with Object.assign, which Node's
  // ESM loader cannot see, so `node dist/` found no named export (Vite, under
  // Vitest, did). lib/index.js declares each export where Node finds them.
} from 'sift/lib/index.js';
import type { OperationCreator } from 'sift/lib/core.js';
import { nearestWithin } from '../platform/text/edit-distance.js';

/**
 * Route filters (CONTRACT 6): MongoDB-style queries, matched by sift with
 * the contract's operators only. sift brings more ($regex, $where, $elemMatch...):
 * those are refused when the config is read, and not given to sift at all.
 */

/** What a filter is matched against. */
export interface FilterSubject {
  body: unknown;
  /** Names in lower case; a header sent several times is an array of its values. */
  headers: Record<string, string | string[]>;
  /** The query string parsed; a repeated key is an array. */
  query: Record<string, string | string[]>;
  eventType: string | null;
}

export type Filter = (subject: FilterSubject) => boolean;

type Operation = OperationCreator<unknown>;

const textOperation =
  (test: (value: string, param: string) => boolean): Operation =>
  (params: unknown, ownerQuery: unknown, options) =>
    createEqualsOperation(
      (value: unknown) => typeof value === 'string' && typeof params === 'string' && test(value, params),
      ownerQuery,
      options,
    );

/** `$contains`: a string that contains the text, or an array that holds the value (sift's equality walks arrays). */
const $contains: Operation = (params: unknown, ownerQuery: unknown, options) =>
  createEqualsOperation(
    (value: unknown) => (typeof value === 'string' && typeof params === 'string' ? value.includes(params) : value === params),
    ownerQuery,
    options,
  );

type Primitive = string | number | boolean | null;

function isPrimitive(value: unknown): value is Primitive {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * sift's `$in` tests a value against each listed value in turn, through a
 * deep equality, and prepares each with work of its own: a 200,000-value
 * list took 3 s to compile (twice on a reload: checked, then built) and 50 ms
 * for each delivery matched (issue 28). Here the plain values (strings,
 * numbers, booleans, null) are looked up in one Set, with what sift's
 * equality gives them (`null` matches a missing value too, NaN nothing); the
 * others (objects, arrays) stay sift's, and sift still walks the paths and
 * arrays as before. `$nin` is sift's complement of the same `$in`.
 */
function withPlainValuesInASet(params: unknown): unknown {
  if (!Array.isArray(params)) return params;
  const ready = preparedLists.get(params);
  if (ready !== undefined) return ready;
  const sorted = { plain: new Set<Primitive>(), others: [] as unknown[] };
  sortValues(params, 0, params.length, sorted);
  return asOperand(params, sorted);
}

interface SortedValues {
  plain: Set<Primitive>;
  others: unknown[];
}

/** The plain values of `values[from, to)` into the Set, the others (objects, arrays; NaN matches nothing) kept aside. */
function sortValues(values: readonly unknown[], from: number, to: number, into: SortedValues): void {
  for (let index = from; index < to; index += 1) {
    const value = values[index];
    if (isPrimitive(value)) {
      if (!Number.isNaN(value)) into.plain.add(value);
    } else {
      into.others.push(value);
    }
  }
}

function asOperand(params: readonly unknown[], { plain, others }: SortedValues): unknown {
  if (plain.size === 0) return params;
  const hasNull = plain.has(null);
  const inSet = (value: unknown): boolean => (value === null || value === undefined ? hasNull : plain.has(value as Primitive));
  return [inSet, ...others];
}

/** `$in` and `$nin` lists whose Set was built ahead (prepareLongLists), by the list itself. */
const preparedLists = new WeakMap<readonly unknown[], unknown>();
/** Values put in a Set between two turns of the event loop. */
const VALUES_PER_TURN = 5000;

/**
 * Builds the Set of every `$in` and `$nin` list longer than a few thousand
 * values in these filters ahead of `compileFilter`, a few thousand values at
 * a time between turns of the event loop: 200,000 values take 0.1 to 0.3 s,
 * which a reload (SIGHUP) would otherwise spend in one go while no request
 * is answered. `compileFilter` then takes the Set as it is.
 */
export async function prepareLongLists(filters: Iterable<unknown>): Promise<void> {
  for (const list of longLists(filters)) {
    const sorted = { plain: new Set<Primitive>(), others: [] as unknown[] };
    for (let from = 0; from < list.length; from += VALUES_PER_TURN) {
      sortValues(list, from, Math.min(list.length, from + VALUES_PER_TURN), sorted);
      await new Promise((resolve) => setImmediate(resolve));
    }
    preparedLists.set(list, asOperand(list, sorted));
  }
}

/** The `$in` and `$nin` lists of more than VALUES_PER_TURN values, at any depth of the filters. */
function longLists(filters: Iterable<unknown>): unknown[][] {
  const found: unknown[][] = [];
  const walkInto = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const member of node as unknown[]) walkInto(member);
    } else if (isPlainObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if ((key === '$in' || key === '$nin') && Array.isArray(value)) {
          if (value.length > VALUES_PER_TURN) found.push(value as unknown[]);
        } else {
          walkInto(value);
        }
      }
    }
  };
  for (const filter of filters) walkInto(filter);
  return found;
}

const $inSet: Operation = (params, ownerQuery, options, name) =>
  $in(withPlainValuesInASet(params) as never, ownerQuery, options, name);
const $ninSet: Operation = (params, ownerQuery, options, name) =>
  $nin(withPlainValuesInASet(params) as never, ownerQuery, options, name);

const OPERATIONS = {
  $eq,
  $ne,
  $in: $inSet,
  $nin: $ninSet,
  $gt,
  $gte,
  $lt,
  $lte,
  $exists,
  $and,
  $or,
  $not,
  $startsWith: textOperation((value, param) => value.startsWith(param)),
  $endsWith: textOperation((value, param) => value.endsWith(param)),
  $contains,
} as const;

export const FILTER_OPERATORS = Object.keys(OPERATIONS);
export const FILTER_FIELDS = ['body', 'headers', 'query', 'eventType'] as const;

/** Every problem with a filter, each naming its path below `at` (empty: it is valid). */
export function filterProblems(filter: unknown, at: string): string[] {
  const problems: string[] = [];
  if (!isPlainObject(filter)) return [`${at}: expected an object such as { body: { type: "invoice.paid" } }`];
  for (const key of Object.keys(filter)) {
    if (key.startsWith('$')) continue;
    const field = key.split('.')[0] ?? key;
    if (!(FILTER_FIELDS as readonly string[]).includes(field)) {
      const near = nearestWithin(field, FILTER_FIELDS, 2);
      problems.push(
        `${at}.${key}: a filter matches ${FILTER_FIELDS.join(', ')}${near === undefined ? '' : ` (did you mean "${near}"?)`}`,
      );
    }
  }
  walk(filter, at, problems);
  if (problems.length === 0) {
    try {
      compileFilter(filter);
    } catch (error) {
      problems.push(`${at}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}

function walk(value: unknown, at: string, problems: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, `${at}[${index}]`, problems));
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    const path = `${at}.${key}`;
    if (key.startsWith('$')) {
      if (!FILTER_OPERATORS.includes(key)) {
        const near = nearestWithin(key, FILTER_OPERATORS, 3);
        problems.push(
          `${path}: unknown operator${near === undefined ? '' : ` (did you mean "${near}"?)`}; the operators are ${FILTER_OPERATORS.join(' ')}`,
        );
        continue;
      }
      if ((key === '$and' || key === '$or') && (!Array.isArray(inner) || inner.length === 0 || !inner.every(isPlainObject))) {
        problems.push(`${path}: expected a list of filters`);
        continue;
      }
      if ((key === '$in' || key === '$nin') && !Array.isArray(inner)) {
        problems.push(`${path}: expected a list of values`);
        continue;
      }
      if (key === '$exists' && typeof inner !== 'boolean') {
        problems.push(`${path}: expected true or false`);
        continue;
      }
      if (['$startsWith', '$endsWith'].includes(key) && typeof inner !== 'string') {
        problems.push(`${path}: expected a string`);
        continue;
      }
    }
    walk(inner, path, problems);
  }
}

/**
 * The filter as a test; throws on a filter that `filterProblems` would refuse.
 * Nested fields are paths, as the contract writes them (`{ body: { type: { $startsWith: … } } }`
 * is `{ "body.type": { $startsWith: … } }`), where MongoDB would compare a
 * nested object as a whole.
 */
export function compileFilter(
  filter: Record<string, unknown>,
  /** sift's equality, replaced only by tests that count how often values are compared. */
  compare?: (a: unknown, b: unknown) => boolean,
): Filter {
  const options = compare === undefined ? { operations: OPERATIONS } : { operations: OPERATIONS, compare };
  const test = createQueryTester(asPaths(filter) as Query<FilterSubject>, options);
  return (subject) => test(subject);
}

/** Nested plain objects (without operators) turned into dotted paths; `$and`/`$or` members likewise. */
function asPaths(filter: Record<string, unknown>, prefix = '', into: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$')) {
      into[key] =
        (key === '$and' || key === '$or') && Array.isArray(value)
          ? value.map((member) => (isPlainObject(member) ? asPaths(member) : member))
          : value;
      continue;
    }
    const path = `${prefix}${key}`;
    if (isPlainObject(value) && Object.keys(value).length > 0 && !Object.keys(value).some((inner) => inner.startsWith('$'))) {
      asPaths(value, `${path}.`, into);
    } else {
      into[path] = value;
    }
  }
  return into;
}

/** The subject's fields as bits, for `fieldsRead`: what a filter reads is built, the rest is not. */
export const SUBJECT_BODY = 1;
export const SUBJECT_HEADERS = 2;
export const SUBJECT_QUERY = 4;
export const SUBJECT_EVENT_TYPE = 8;
const SUBJECT_ALL = SUBJECT_BODY | SUBJECT_HEADERS | SUBJECT_QUERY | SUBJECT_EVENT_TYPE;
const FIELD_BITS = new Map<string, number>([
  ['body', SUBJECT_BODY],
  ['headers', SUBJECT_HEADERS],
  ['query', SUBJECT_QUERY],
  ['eventType', SUBJECT_EVENT_TYPE],
]);

/**
 * The fields of the subject a filter can read, as bits: the first segment
 * of each field path, through `$and`, `$or` and `$not`. Anything else at
 * the top (another operator) reads all of them. A delivery's subject is
 * then built with these only: a filter on `eventType` parses no body and
 * copies no headers.
 */
export function fieldsRead(filter: unknown): number {
  if (!isPlainObject(filter)) return SUBJECT_ALL;
  let bits = 0;
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value)) return SUBJECT_ALL;
      for (const member of value as unknown[]) bits |= fieldsRead(member);
    } else if (key === '$not') {
      bits |= fieldsRead(value);
    } else if (key.startsWith('$')) {
      return SUBJECT_ALL;
    } else {
      bits |= FIELD_BITS.get(key.split('.')[0] ?? key) ?? SUBJECT_ALL;
    }
  }
  return bits;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
