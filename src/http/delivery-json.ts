import { classifyMediaType } from '../receive/media-type.js';
import { parseFormBody } from '../receive/parse-form.js';
import { parseJsonBody } from '../receive/parse-json.js';
import type { StoredDelivery } from '../store/inbox-store.js';
import type { DeliveryJson } from './schemas.js';

/** A stored delivery as the API shows it (CONTRACT 3); the body is parsed from the raw bytes. */
export function deliveryJson(d: StoredDelivery): DeliveryJson {
  return {
    id: d.id,
    seq: d.seq,
    source: d.source,
    receivedAt: new Date(d.receivedAt).toISOString(),
    method: d.method,
    query: d.query,
    contentType: d.contentType,
    size: d.raw.length,
    remoteAddress: d.remoteAddress,
    headers: d.headers,
    body: parsedBody(d),
    verification: d.verification,
  };
}

function parsedBody(d: StoredDelivery): unknown {
  try {
    const kind = classifyMediaType(d.contentType);
    if (kind === 'json') return parseJsonBody(d.raw, true);
    if (kind === 'form') return parseFormBody(d.raw);
  } catch {
    // Kept although it does not parse (a failed verification kept on purpose).
  }
  return null;
}
