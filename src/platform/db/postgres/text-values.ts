/**
 * What PostgreSQL's `text` can hold. It holds any Unicode text but NUL
 * (U+0000: "invalid byte sequence for encoding UTF8: 0x00"), and node-postgres
 * sends a JavaScript string as UTF-8, where a lone UTF-16 surrogate (valid in
 * a JSON string, `"\ud800"`) becomes U+FFFD, so that two different strings
 * arrive as one. SQLite keeps NUL; a lone surrogate becomes U+FFFD there
 * too on Node 22 and later (better-sqlite3 13, Node-API).
 *
 * A lookup by such a value (a delivery id from a request path, `%00`)
 * finds nothing, and is answered so without asking PostgreSQL, which would
 * refuse the query.
 *
 * Of the columns a delivery is stored in, only the dedup key may meet them:
 * it comes from a signed JSON body (Stripe's event `id`, Slack's
 * `event_id`), and both stores escape it (`../dedup-key.ts`). The rest cannot hold them by the time
 * they are stored (docs/scaling.md, "What the text columns hold").
 */

// eslint-disable-next-line no-control-regex
const UNHOLDABLE = /\u0000|\p{Cs}/u;

/** True when `text` is stored as given: no row's text column can equal one that is not (a lookup by it finds nothing). */
export function holdable(text: string): boolean {
  return !UNHOLDABLE.test(text);
}
