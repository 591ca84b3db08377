/**
 * What a header the operator writes may be: the destination's `headers` in
 * the config file and a transform's output headers (docs/contract.md,
 * CONTRACT 6 and 10) follow the same rules, kept here once.
 */

/** Headers that belong to the connection: the HTTP client writes them. */
const CONNECTION_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'expect',
]);

/** The delivery's id and signature, which Reception writes on every forward (CONTRACT 6). */
const FORWARD_HEADERS = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature']);

/** A header name as HTTP allows it (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** May the operator not set this header? The connection's, the delivery's id and signature, and Reception's own `x-reception-*`. */
export function reservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return CONNECTION_HEADERS.has(lower) || FORWARD_HEADERS.has(lower) || lower.startsWith('x-reception-');
}

/** Whether a header value holds only what HTTP lets one hold: visible Latin-1 characters, spaces and tabs. */
export function headerValueAllowed(value: string): boolean {
  // eslint-disable-next-line no-control-regex -- the characters a header value cannot hold
  return !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value) && !/[^\u0000-\u00ff]/.test(value);
}
