import { classifyMediaType } from '../body/media-type.js';
import { parseFormBody } from '../body/parse-form.js';
import { jsonBodyText } from '../body/parse-json.js';
import { decodeText, textBodyJson } from '../body/parse-text.js';
import type { StoredDelivery } from './delivery-store.js';
import type { DeliveryJson, DeliveryPage } from '../api/schemas.js';

/**
 * A JSON body as the sender's own text, placed as is where the delivery is
 * written out (`deliveryText`), never parsed and serialized again: a reader
 * parses it to the same value, numbers keep their digits, and rendering stays
 * linear in the bytes (parsing and serializing half a million keys held the
 * event loop for about a second).
 */
export class JsonText {
  constructor(readonly text: string) {}

  /** For a plain `JSON.stringify` of a delivery: the value, parsed (slower, same result). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** A stored delivery as the API shows it (CONTRACT 3). */
export function deliveryJson(d: StoredDelivery): DeliveryJson {
  const { status, scheme, reason } = d.verification;
  return {
    id: d.id,
    seq: d.seq,
    source: d.source,
    eventType: d.eventType,
    receivedAt: new Date(d.receivedAt).toISOString(),
    method: d.method,
    query: d.query,
    contentType: d.contentType,
    size: d.raw.length,
    remoteAddress: d.remoteAddress,
    headers: d.headers,
    body: bodyOf(d),
    verification: { status, ...(scheme === undefined ? {} : { scheme }), ...(reason === undefined ? {} : { reason }) },
    forwards: d.forwards ?? [],
  };
}

/** A delivery as JSON text, its fields in the order of `DeliverySchema`; a `JsonText` body is written as it is. */
export function deliveryText(delivery: DeliveryJson): string {
  const { body, verification, forwards, ...fields } = delivery;
  const bodyText = body instanceof JsonText ? body.text : (JSON.stringify(body) ?? 'null');
  return `${JSON.stringify(fields).slice(0, -1)},"body":${bodyText},"verification":${JSON.stringify(verification)},"forwards":${JSON.stringify(forwards)}}`;
}

/** A page of the list as JSON text (see `deliveryText`). */
export function deliveryPageText(page: DeliveryPage): string {
  return `{"items":[${page.items.map(deliveryText).join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}

/**
 * The body (CONTRACT 9): what was kept beside the raw bytes (multipart,
 * `any`), else read off them by the Content-Type: JSON as its text, form
 * data parsed, text as the JSON object it holds or as text, XML as text;
 * null for a body that does not parse (a failed verification kept on
 * purpose) or of no kind.
 */
function bodyOf(d: StoredDelivery): JsonText | Record<string, string | string[]> | string | null {
  if (d.parsedBody !== undefined && d.parsedBody !== null) return new JsonText(d.parsedBody);
  switch (classifyMediaType(d.contentType)) {
    case 'json': {
      const text = jsonBodyText(d.raw);
      return text === undefined ? null : new JsonText(text);
    }
    case 'form':
      try {
        return parseFormBody(d.raw);
      } catch {
        return null;
      }
    case 'text': {
      const json = textBodyJson(d.raw);
      return json === undefined ? decodeText(d.raw, d.contentType) : new JsonText(json);
    }
    case 'xml':
      return decodeText(d.raw, d.contentType);
    default:
      return null;
  }
}
