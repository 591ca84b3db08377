import { deliveryFromRow, type DeliveryRow } from '../delivery-row.js';
import type { StoredDelivery } from '../inbox-store.js';
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
 *
 * Of the columns a delivery is stored in, only the dedup key may meet them:
 * it comes from a signed JSON body (Stripe's event `id`, Slack's
 * `event_id`), and is escaped below. The rest cannot hold them by the time
 * they are stored (docs/scaling.md, "What the text columns hold").
 */

// eslint-disable-next-line no-control-regex
const UNHOLDABLE = /\u0000|\p{Cs}/u;
// eslint-disable-next-line no-control-regex
const TO_ESCAPE = /[\\\u0000]|\p{Cs}/gu;
const ESCAPED = /\\(?:\\|0|u[0-9a-f]{4})/g;

/** True when `text` is stored as given: no row's text column can equal one that is not (a lookup by it finds nothing). */
export function holdable(text: string): boolean {
  return !UNHOLDABLE.test(text);
}

/**
 * A dedup key as the `dedup_key` column holds it: `\` becomes `\\`, NUL
 * `\0` and a lone surrogate `\u` and its four lower-case hex digits. One
 * key, one stored form, and back (`unescapeKey`), exactly. Keys without a
 * backslash, NUL or lone surrogate (all that providers send) are kept as
 * they are; migration 000003 escaped the backslashes of keys stored before.
 */
export function escapeKey(key: string): string {
  if (!key.includes('\\') && holdable(key)) return key;
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

/** A `deliveries` row read from PostgreSQL, its dedup key unescaped. */
export function deliveryFromPgRow(row: DeliveryRow): StoredDelivery {
  const delivery = deliveryFromRow(row);
  if (delivery.dedupKey !== null) delivery.dedupKey = unescapeKey(delivery.dedupKey);
  return delivery;
}
