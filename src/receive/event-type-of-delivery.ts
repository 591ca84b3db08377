import type { IncomingHttpHeaders } from 'node:http';
import { classifyMediaType } from '../body/media-type.js';
import { parseFormBody } from '../body/parse-form.js';
import { jsonBodyValue } from '../body/parse-json.js';
import { eventTypeOf } from './event-type.js';
import type { StoredDelivery } from '../store/inbox-store.js';

/**
 * A stored delivery's event type, worked out again from what it keeps (its
 * scheme, headers and body) as the receiver does for the routes' filters.
 * (To be replaced by the stored `eventType` column when the store has it.)
 */
export function eventTypeOfDelivery(delivery: StoredDelivery): string | null {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of delivery.headers) {
    const lower = name.toLowerCase();
    if (headers[lower] === undefined) headers[lower] = value;
  }
  return eventTypeOf(delivery.verification.scheme, headers, bodyOf(delivery));
}

function bodyOf(delivery: StoredDelivery): unknown {
  try {
    const kind = classifyMediaType(delivery.contentType);
    if (kind === 'json') return jsonBodyValue(delivery.raw);
    if (kind === 'form') return parseFormBody(delivery.raw);
  } catch {
    // A body kept on purpose though it does not parse (a failed verification): none.
  }
  return undefined;
}
