import type { ResponseConfig } from '../config/source-config-schema.js';
import { NO_CONTENT_STATUSES } from '../config/body-and-answer-rules.js';
import { mediaTypeEssence } from '../body/media-type.js';

/**
 * A source's own answer to a stored delivery (CONTRACT 9: `response`), as
 * the config file set it, checked there: a status from 200 to 299, headers,
 * and a body in which `{id}`, `{source}` and `{receivedAt}` are replaced.
 */
export interface CustomAnswer {
  status: number;
  /** Names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** Undefined: section 1's JSON. */
  body?: string;
}

/** What the placeholders stand for: the delivery's, or for a duplicate the first delivery's. */
export interface AnswerValues {
  id: string;
  source: string;
  receivedAt: string;
}

const PLACEHOLDERS = /\{(id|source|receivedAt)\}/g;

/**
 * Set on every custom answer, after the configured headers (which may not
 * name them): it comes from the web page's origin, to whoever sent the
 * request (a browser too, by a form posted from another site), so it must
 * never be sniffed or run as a page, whatever Content-Type the file gives it.
 */
const GUARD_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
} as const;

export function compileAnswer(config: ResponseConfig): CustomAnswer {
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(config.headers ?? {})) headers[name.toLowerCase()] = value;
  return { status: config.status ?? 200, headers, ...(config.body === undefined ? {} : { body: config.body }) };
}

/**
 * The answer's status, headers and body. `standard` is section 1's JSON
 * body, sent when the source sets no body of its own. A placeholder's value
 * is escaped for the answer's Content-Type: as in a JSON string for JSON,
 * as character references for HTML and XML, as it is otherwise.
 */
export function renderAnswer(
  answer: CustomAnswer,
  values: AnswerValues,
  standard: string,
): { status: number; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {
    'content-type': answer.body === undefined ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8',
    ...answer.headers,
    ...GUARD_HEADERS,
  };
  if (NO_CONTENT_STATUSES.has(answer.status)) {
    delete headers['content-type'];
    return { status: answer.status, headers, body: '' };
  }
  if (answer.body === undefined) return { status: answer.status, headers, body: standard };
  const escape = escaperFor(headers['content-type']);
  const body = answer.body.replace(PLACEHOLDERS, (_match, name: keyof AnswerValues) => escape(values[name]));
  return { status: answer.status, headers, body };
}

function escaperFor(contentType: string | undefined): (value: string) => string {
  const essence = mediaTypeEssence(contentType) ?? '';
  if (essence === 'application/json' || essence.endsWith('+json')) return (value) => JSON.stringify(value).slice(1, -1);
  if (essence.includes('html') || essence.endsWith('/xml') || essence.endsWith('+xml')) return escapeMarkup;
  return (value) => value;
}

const MARKUP: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeMarkup(value: string): string {
  return value.replace(/[&<>"']/g, (character) => MARKUP[character] ?? character);
}
