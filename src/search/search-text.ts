import type { HeaderList } from '../platform/http/header-list.js';

/**
 * The text that `q` searches (CONTRACT 8): the header values, each read as
 * UTF-8 (a header keeps one character per byte, so a value sent as UTF-8
 * `café` is kept as `cafÃ©`; its text is `café` again), then the raw body as
 * UTF-8 text, invalid sequences replaced by U+FFFD, one per line. Header
 * names are not searched. NUL becomes U+FFFD too: PostgreSQL's text cannot
 * hold it, and both stores search the same text.
 */
export function searchText(headers: HeaderList, raw: Buffer): string {
  const values = headers.map(([, value]) => asText(Buffer.from(value, 'latin1')));
  values.push(asText(raw));
  return values.join('\n');
}

/** A search as the text is compared: the same replacements, lower case. */
export function searchNeedle(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u0000|\p{Cs}/gu, '\ufffd').toLowerCase();
}

/**
 * True when the delivery's header values or body contain `needle` (from
 * `searchNeedle`), ignoring case: the check that an index's candidates pass.
 * Each value on its own, so that a match never spans two of them.
 */
export function containsText(headers: HeaderList, raw: Buffer, needle: string): boolean {
  for (const [, value] of headers) {
    if (asText(Buffer.from(value, 'latin1')).toLowerCase().includes(needle)) return true;
  }
  return asText(raw).toLowerCase().includes(needle);
}

function asText(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text;
}
