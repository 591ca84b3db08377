/** What a transform answers (CONTRACT 10 "Out"), checked: a body (any JSON value) and headers to add. */
export interface TransformOutput {
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * Headers a transform cannot set (CONTRACT 10 "Out"): the delivery's id and
 * signature, Reception's own, and those that belong to the connection.
 */
const RESERVED = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** May a transform set this header? */
export function reservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.has(lower) || lower.startsWith('x-reception-');
}

/**
 * The output of a run as Reception takes it: null (drop), or `{ body?, headers? }`
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
    if (!TOKEN.test(name)) return { error: `headers: ${JSON.stringify(name.slice(0, 100))} is not a valid header name` };
    if (reservedHeader(name)) return { error: `headers: ${name} is set by Reception and cannot be set by a transform` };
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
      return { error: `headers.${name}: expected a string, got ${raw === null ? 'null' : typeof raw}` };
    }
    const text = String(raw);
    // eslint-disable-next-line no-control-regex -- the characters a header value cannot hold
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(text) || /[^\u0000-\u00ff]/.test(text)) {
      return { error: `headers.${name}: a header value holds visible Latin-1 characters, spaces and tabs only` };
    }
    checked[name.toLowerCase()] = text;
  }
  return { output: { ...output, headers: checked } };
}
