import { deliveryJson, JsonText } from '../deliveries/delivery-json.js';
import type { StoredDelivery } from '../deliveries/delivery-store.js';

/**
 * The event a transform is called with (CONTRACT 10 "In"), as JSON text:
 * `{ id, seq, source, eventType, receivedAt, headers, query, body, rawBody }`.
 * `headers` by lower-case name, a repeated header's values joined with ", ";
 * `query` parsed (a repeated parameter: a list of its values); `body` as the
 * API shows it (a JSON body placed as the sender's text, never parsed here);
 * `rawBody` the bytes as UTF-8, invalid bytes replaced by U+FFFD.
 */
export function transformEventJson(delivery: StoredDelivery): string {
  const shown = deliveryJson(delivery);
  // Null prototype: a header or parameter named `__proto__` is kept as any other name.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of delivery.headers) {
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  const fields = {
    id: delivery.id,
    seq: delivery.seq,
    source: delivery.source,
    eventType: delivery.eventType,
    receivedAt: shown.receivedAt,
    headers,
    query: parsedQuery(delivery.query),
  };
  const body = shown.body instanceof JsonText ? shown.body.text : (JSON.stringify(shown.body) ?? 'null');
  return `${JSON.stringify(fields).slice(0, -1)},"body":${body},"rawBody":${JSON.stringify(delivery.raw.toString('utf8'))}}`;
}

/** A query string (without `?`) as an object: one value a string, a repeated name the list of its values. */
export function parsedQuery(query: string): Record<string, string | string[]> {
  const parsed = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(query)) {
    const seen = parsed[name];
    parsed[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return parsed;
}
