/**
 * A dedup key as both stores keep it in `deliveries.dedup_key`. The key
 * comes from the sender (Stripe's event `id`, Slack's `event_id`: read from
 * a signed JSON body, where `"\u0000"` and a lone UTF-16 surrogate
 * `"\ud800"` are valid), and neither store can take every JavaScript string
 * as it is:
 *
 * - PostgreSQL's `text` cannot hold NUL ("invalid byte sequence for
 *   encoding UTF8: 0x00").
 * - A driver sends a string as UTF-8, where a lone surrogate has no form:
 *   node-postgres, and better-sqlite3 13 (Node-API, Node 22 and later:
 *   src/platform/db/sqlite/driver.ts), make each one U+FFFD, so that `evt_\ud800`,
 *   `evt_\udc00` and `evt_\ufffd` would arrive as one key, and the second
 *   delivery be answered as a duplicate of the first. (better-sqlite3 12, on
 *   Node 20, wrote them as WTF-8, three bytes each, kept apart.)
 *
 * So both stores write `escapeKey(key)` and compare with it, and read back
 * with `unescapeKey` (in `deliveryFromRow`). SQLite could hold NUL, but
 * takes the same escape: one stored form on both stores, and one function
 * (docs/storage.md, "Dedup keys").
 */

// eslint-disable-next-line no-control-regex
const PLAIN = /\\|\u0000|\p{Cs}/u;
// eslint-disable-next-line no-control-regex
const TO_ESCAPE = /[\\\u0000]|\p{Cs}/gu;
const ESCAPED = /\\(?:\\|0|u[0-9a-f]{4})/g;

/**
 * A dedup key as the `dedup_key` column holds it: `\` becomes `\\`, NUL
 * `\0` and a lone surrogate `\u` and its four lower-case hex digits. One
 * key, one stored form, and back (`unescapeKey`), exactly. Keys without a
 * backslash, NUL or lone surrogate (all that providers send) are kept as
 * they are. Keys stored before escaping were rewritten in this form by
 * PostgreSQL's migration 000003 and SQLite's 000009.
 */
export function escapeKey(key: string): string {
  if (!PLAIN.test(key)) return key;
  return key.replace(TO_ESCAPE, (char) => {
    if (char === '\\') return '\\\\';
    if (char === '\u0000') return '\\0';
    return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** The key that `escapeKey` made `stored` from. */
export function unescapeKey(stored: string): string {
  if (!stored.includes('\\')) return stored;
  return stored.replace(ESCAPED, (escape) => {
    if (escape === '\\\\') return '\\';
    if (escape === '\\0') return '\u0000';
    return String.fromCharCode(Number.parseInt(escape.slice(2), 16));
  });
}
