import type { MultipartBody } from '../body/parse-multipart.js';
import { textBodyJson } from '../body/parse-text.js';
import type { ReceivedBody } from '../body/parse-body.js';
import type { FormBody } from '../body/parse-form.js';
import { classifyMediaType } from '../body/media-type.js';
import type { EventTypeSubject } from './event-type.js';
import type { StoredDelivery } from '../deliveries/delivery-store.js';

type BodyFieldsOf = Pick<EventTypeSubject, 'form' | 'jsonText'>;

/** What a received body adds to its event type subject: a form's or a multipart body's fields, a text body's JSON. */
export function receivedBodyFields(body: ReceivedBody): BodyFieldsOf {
  switch (body.kind) {
    case 'form':
      return { form: body.value() as FormBody };
    case 'multipart':
      return { form: (body.value() as MultipartBody).fields };
    case 'text':
      return textBodyJson(body.raw) === undefined ? {} : { jsonText: body.raw };
    default:
      return {};
  }
}

/**
 * The event type subject of a stored delivery, for one stored before types
 * were kept: the same fields the receiver reads (a multipart body's fields
 * from the parsed body kept beside its bytes).
 */
export function storedEventTypeSubject(
  delivery: Pick<StoredDelivery, 'verification' | 'headers' | 'contentType' | 'raw' | 'parsedBody'>,
): EventTypeSubject {
  const { verification, headers, contentType, raw, parsedBody } = delivery;
  const subject: EventTypeSubject = { scheme: verification.scheme, headers, contentType, raw };
  if (parsedBody !== undefined && parsedBody !== null && /^multipart\/form-data\b/i.test(contentType.trim())) {
    try {
      const parsed = JSON.parse(parsedBody) as MultipartBody | null;
      if (parsed !== null && typeof parsed === 'object') subject.form = parsed.fields;
    } catch {
      // A parsed body that is not JSON cannot be: no fields, then.
    }
  } else if (
    classifyMediaType(contentType) !== 'json' &&
    /^text\/plain\b/i.test(contentType.trim()) &&
    textBodyJson(raw) !== undefined
  ) {
    subject.jsonText = raw;
  }
  return subject;
}
