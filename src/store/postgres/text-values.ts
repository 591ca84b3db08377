/**
 * What PostgreSQL's `text` can hold. It holds any Unicode text but NUL
 * (U+0000: "invalid byte sequence for encoding UTF8: 0x00"), and node-postgres
 * sends a JavaScript string as UTF-8, where a lone UTF-16 surrogate (valid in
 * a JSON string, `"\ud800"`) becomes U+FFFD, so that two different strings
 * arrive as one. SQLite keeps NUL, and keeps lone surrogates apart (the
 * store contract tests both).
 *
 * A lookup by such a value (a delivery id from a request path, `%00`)
 * finds nothing, and is answered so without asking PostgreSQL, which would
 * refuse the query.
 */

// eslint-disable-next-line no-control-regex
const UNHOLDABLE = /\u0000|\p{Cs}/u;

/** True when `text` is stored as given: no row's text column can equal one that is not (a lookup by it finds nothing). */
export function holdable(text: string): boolean {
  return !UNHOLDABLE.test(text);
}
