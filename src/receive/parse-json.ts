import { isUtf8 } from 'node:buffer';
import { ProblemError } from '../errors.js';

export const MAX_JSON_DEPTH = 1000;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Parses a JSON body (CONTRACT 1). The bytes must be UTF-8, nest at most
 * 1000 levels, and (unless `anyValue`) be an object at the top level.
 *
 * `JSON.parse` defines keys such as `__proto__` as own data properties, so a
 * hostile payload is kept as sent and never changes a prototype.
 */
export function parseJsonBody(raw: Buffer, anyValue = false): unknown {
  if (!isUtf8(raw)) {
    throw new ProblemError('invalid_json', 'The body is not valid UTF-8.');
  }
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'unparseable';
    throw new ProblemError('invalid_json', `The body is not valid JSON: ${reason}`);
  }
  // Valid JSON nested deeper than the limit needs an opening and a closing
  // bracket per level, so shorter bodies need no scan.
  if (raw.length >= 2 * (MAX_JSON_DEPTH + 1) && jsonDepthExceeds(raw, MAX_JSON_DEPTH)) {
    throw new ProblemError('invalid_json', `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  if (!anyValue && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new ProblemError('json_not_object', `The JSON body must be an object, not ${describe(value)}.`);
  }
  return value;
}

/** True when brackets outside strings nest deeper than `limit`. Linear, no recursion. */
export function jsonDepthExceeds(raw: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}
