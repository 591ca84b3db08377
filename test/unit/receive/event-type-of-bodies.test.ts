import { describe, expect, it } from 'vitest';
import { parseReceivedBody } from '../../../src/body/parse-body.js';
import { eventTypeOf } from '../../../src/event-types/event-type.js';
import { receivedBodyFields, storedEventTypeSubject } from '../../../src/event-types/event-type-of-delivery.js';
import type { StoredDelivery } from '../../../src/deliveries/delivery-store.js';

/** CONTRACT 8 over the body kinds of CONTRACT 9: a multipart body's fields, a text body that is JSON (AWS SNS). */

const BOUNDARY = 'b0undary';
const MULTIPART = 'multipart/form-data; boundary=' + BOUNDARY;
const multipartBody = Buffer.from(
  [
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="event"',
    '',
    'inbound.mail',
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="attachment"; filename="a.txt"',
    'Content-Type: text/plain',
    '',
    'type=not this',
    `--${BOUNDARY}--`,
    '',
  ].join('\r\n'),
);
const snsBody = Buffer.from('{"Type":"Notification","type":"topic.published","Message":"hi"}');

async function typeOfReceived(kind: 'multipart' | 'text' | 'xml', raw: Buffer, contentType: string): Promise<string | null> {
  const body = await parseReceivedBody(kind, raw, contentType, { anyJson: false });
  return eventTypeOf({ scheme: undefined, headers: [], contentType, raw, ...receivedBodyFields(body) });
}

function stored(contentType: string, raw: Buffer, parsedBody?: string): StoredDelivery {
  return {
    id: 'x',
    seq: 1,
    source: 's',
    receivedAt: 0,
    method: 'POST',
    query: '',
    contentType,
    remoteAddress: '127.0.0.1',
    headers: [],
    raw,
    verification: { status: 'none' },
    dedupKey: null,
    eventType: null,
    ...(parsedBody === undefined ? {} : { parsedBody }),
  } as StoredDelivery;
}

describe('event types of the other body kinds', () => {
  it("reads a multipart body's fields as a form's, not its files", async () => {
    expect(await typeOfReceived('multipart', multipartBody, MULTIPART)).toBe('inbound.mail');
  });

  it('reads a text body that is a JSON object as JSON, and plain text as none', async () => {
    expect(await typeOfReceived('text', snsBody, 'text/plain; charset=utf-8')).toBe('topic.published');
    expect(await typeOfReceived('text', Buffer.from('type=push'), 'text/plain')).toBeNull();
    expect(await typeOfReceived('xml', Buffer.from('<type>x</type>'), 'application/xml')).toBeNull();
  });

  it('gives a stored delivery the same type in the background fill', async () => {
    const multipart = await parseReceivedBody('multipart', multipartBody, MULTIPART, { anyJson: false });
    expect(eventTypeOf(storedEventTypeSubject(stored(MULTIPART, multipartBody, multipart.stored ?? undefined)))).toBe(
      'inbound.mail',
    );
    expect(eventTypeOf(storedEventTypeSubject(stored('text/plain', snsBody)))).toBe('topic.published');
    expect(eventTypeOf(storedEventTypeSubject(stored(MULTIPART, multipartBody, 'not json')))).toBeNull();
  });
});
