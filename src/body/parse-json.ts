import { isUtf8 } from 'node:buffer';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { scanJson, type JsonKind } from './json-scan.js';

export const MAX_JSON_DEPTH = 1000;

/**
 * Checks a JSON body (CONTRACT 1) without building its value: the bytes
 * must be UTF-8 and one JSON text (after a byte order mark, if any) that
 * nests at most 1000 levels and (unless `anyValue`) is an object at the
 * top level. Throws `invalid_json` or `json_not_object`.
 *
 * The receiver keeps the raw bytes, so it needs no value: checking is linear
 * in the bytes, where `JSON.parse` of half a million keys held the event
 * loop, and every other sender, for half a second.
 */
export function checkJsonBody(raw: Buffer, anyValue = false): void {
  if (!isUtf8(raw)) {
    throw new ProblemError('invalid_json', 'The body is not valid UTF-8.');
  }
  const scan = scanJson(raw, MAX_JSON_DEPTH);
  if (!scan.ok) {
    throw new ProblemError(
      'invalid_json',
      scan.tooDeep
        ? `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels.`
        : `The body is not valid JSON: ${scan.problem} at byte ${scan.at}.`,
    );
  }
  if (!anyValue && scan.kind !== 'object') {
    throw new ProblemError(
      'json_not_object',
      `The JSON body must be an object, not ${describe(scan.kind)}. To take any JSON value, set "anyJson: true" on the source in the config file.`,
    );
  }
}

/**
 * Checks a JSON body as `checkJsonBody` does, then parses it, for the few
 * callers that need its value (body handshakes). `JSON.parse` defines keys
 * such as `__proto__` as own data properties, so a hostile payload is kept
 * as sent and never changes a prototype.
 */
export function parseJsonBody(raw: Buffer, anyValue = false): unknown {
  checkJsonBody(raw, anyValue);
  return jsonBodyValue(raw);
}

/** The value of a body that `checkJsonBody` accepted, parsed without checking it again. */
export function jsonBodyValue(raw: Buffer): unknown {
  return JSON.parse(jsonText(raw));
}

/**
 * A stored JSON body as JSON text to place inside a larger JSON document
 * (the API's and the stream's `body`), without parsing it: the sender's own
 * text, byte order mark dropped, with line breaks, which valid JSON holds
 * only between tokens, turned into spaces (an event-stream `data:` line must
 * not break). Undefined when the bytes are not valid JSON.
 */
export function jsonBodyText(raw: Buffer): string | undefined {
  if (!isUtf8(raw) || !scanJson(raw, MAX_JSON_DEPTH).ok) return undefined;
  const text = jsonText(raw);
  return raw.includes(0x0a) || raw.includes(0x0d) ? text.replace(/[\r\n]/g, ' ') : text;
}

/** The bytes as text, without a byte order mark. */
function jsonText(raw: Buffer): string {
  const text = raw.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function describe(kind: JsonKind): string {
  if (kind === 'array') return 'an array';
  if (kind === 'null') return 'null';
  return `a ${kind}`;
}
