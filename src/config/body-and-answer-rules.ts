import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import type { SourceConfig } from './source-config-schema.js';

/**
 * Headers a source's `response.headers` may not set: they belong to the
 * connection or the framing, Node writes them itself, or Reception sets them
 * on every custom answer (`nosniff` and a sandboxing Content-Security-Policy,
 * so that an answer never runs as a page on Reception's origin).
 */
export const RESERVED_ANSWER_HEADERS: ReadonlySet<string> = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
  'proxy-authenticate',
  'date',
  'x-content-type-options',
  'content-security-policy',
]);

/** Statuses whose answers have no content (RFC 9110 15.3.5, 15.3.6). */
export const NO_CONTENT_STATUSES: ReadonlySet<number> = new Set([204, 205]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex -- the characters a header value cannot hold
const NOT_IN_A_HEADER_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/;

/** What a source of the right shape may still get wrong in `accept` and `response` (CONTRACT 9). */
export function bodyAndAnswerProblems(at: string, source: SourceConfig): string[] {
  const problems: string[] = [];
  const accept = source.accept ?? [];
  accept.forEach((kind, index) => {
    if (accept.indexOf(kind) !== index) problems.push(`${at}.accept: "${kind}" is listed twice`);
  });
  if (source.anyJson === true && source.accept !== undefined && !accept.includes('json')) {
    problems.push(`${at}.anyJson: only means something for a source whose accept list has "json"`);
  }
  const response = source.response;
  if (response === undefined) return problems;
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    const shown = TOKEN.test(name) ? `.${name}` : `[${escapeJsonForTerminal(JSON.stringify(name))}]`;
    if (!TOKEN.test(name)) problems.push(`${at}.response.headers${shown}: not a valid header name`);
    else if (RESERVED_ANSWER_HEADERS.has(name.toLowerCase())) {
      problems.push(`${at}.response.headers${shown}: set by Reception or Node itself, it cannot be configured`);
    }
    if (NOT_IN_A_HEADER_VALUE.test(value)) {
      problems.push(`${at}.response.headers${shown}: a header value holds visible Latin-1 characters, spaces and tabs only`);
    }
  }
  if (response.status !== undefined && NO_CONTENT_STATUSES.has(response.status) && response.body !== undefined) {
    problems.push(`${at}.response.body: a ${response.status} answer has no content; leave body out or choose another status`);
  }
  return problems;
}
