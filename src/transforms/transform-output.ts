import { HEADER_NAME, headerValueAllowed, reservedHeader } from '../platform/http/reserved-headers.js';

/** What a transform answers (CONTRACT 10 "Out"), checked: a body (any JSON value) and headers to add. */
export interface TransformOutput {
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * The output of a run as Reception takes it (a header it may not set: the same
 * as a destination's `headers`, platform/http/reserved-headers.ts): null (drop), or `{ body?, headers? }`
 * with header values that are strings (numbers and booleans are written as
 * text) and names that may be set; anything else is an error in words.
 */
export function checkedOutput(value: unknown): { output: TransformOutput | null } | { error: string } {
  if (value === null || value === undefined) return { output: null };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      error: `the transform returned ${Array.isArray(value) ? 'an array' : typeof value}: return { body, headers } or null`,
    };
  }
  const { body, headers, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    return { error: `the transform returned unknown keys (${unknown.slice(0, 5).join(', ')}): return { body, headers } or null` };
  const output: TransformOutput = body === undefined ? {} : { body };
  if (headers === undefined || headers === null) return { output };
  if (typeof headers !== 'object' || Array.isArray(headers))
    return { error: 'headers: expected an object of header names and values' };
  const checked: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers as Record<string, unknown>)) {
    if (!HEADER_NAME.test(name)) return { error: `headers: ${JSON.stringify(name.slice(0, 100))} is not a valid header name` };
    if (reservedHeader(name)) return { error: `headers: ${name} is set by Reception and cannot be set by a transform` };
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
      return { error: `headers.${name}: expected a string, got ${raw === null ? 'null' : typeof raw}` };
    }
    const text = String(raw);
    if (!headerValueAllowed(text)) {
      return { error: `headers.${name}: a header value holds visible Latin-1 characters, spaces and tabs only` };
    }
    checked[name.toLowerCase()] = text;
  }
  return { output: { ...output, headers: checked } };
}
