import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { connectSse } from '../helpers/sse.js';
import { startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';
import type { DeliveryPage, DeliveryView, Receipt } from '../helpers/exchange.js';

/**
 * More bodies (CONTRACT 9): each `accept` kind stored byte for byte, its
 * `body` as the contract shapes it, on both stores; what a source that does
 * not take a type answers; a signature checked over the raw bytes of every
 * kind.
 */

const SECRET = 'body-kinds-secret-0b7e';

const CONFIG: ConfigFile = {
  sources: {
    sns: { accept: ['text'] },
    mail: { accept: ['multipart', 'form'] },
    soap: { accept: ['xml'] },
    anything: { accept: ['any'] },
    mixed: { accept: ['json', 'any'] },
    plain: {},
    signed: { accept: ['json', 'form', 'multipart', 'text', 'xml', 'any'], verify: { scheme: 'github', secrets: [SECRET] } },
  },
};

/** A body to send: its bytes and Content-Type (none when undefined). */
interface Payload {
  bytes: Buffer;
  contentType: string | undefined;
}

/** A multipart body as the platform's own FormData encodes it. */
async function multipart(form: FormData): Promise<Payload> {
  const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { bytes: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') ?? undefined };
}

/** Every byte value, and the sequences a multipart parser looks for, so that a file's bytes must come back untouched. */
const BINARY = Buffer.concat([
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  Buffer.from('\r\n--\r\n\r\n--boundary--\r\n'),
  Buffer.alloc(70_000, 0xff),
]);

describe.each(STORES)('body kinds (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  beforeAll(async () => {
    if (await storeAvailable(kind, 'body kind tests')) server = await startForwarding(kind, CONFIG);
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (source: string, payload: Payload, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${(server as RunningApp<InboxDatabase>).url}/api/webhook/${source}`, {
      method: 'POST',
      headers: { ...(payload.contentType === undefined ? {} : { 'content-type': payload.contentType }), ...headers },
      body: payload.bytes,
    });

  const read = async <T>(path: string): Promise<{ status: number; headers: Headers; bytes: Buffer; json: () => T }> => {
    const running = server as RunningApp<InboxDatabase>;
    const res = await fetch(`${running.url}${path}`, { headers: running.auth });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString('utf8')) as T };
  };

  /** Sends, insists on 200, and answers the stored delivery after checking /raw gives the bytes back with the Content-Type sent. */
  const stored = async (source: string, payload: Payload, headers: Record<string, string> = {}): Promise<DeliveryView> => {
    const answer = await post(source, payload, headers);
    const text = await answer.text();
    expect(answer.status, text).toBe(200);
    const { id } = JSON.parse(text) as Receipt;
    const raw = await read(`/api/deliveries/${id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.bytes.equals(payload.bytes)).toBe(true);
    expect(raw.headers.get('content-type')).toBe(payload.contentType ?? 'application/octet-stream');
    const delivery = (await read<DeliveryView>(`/api/deliveries/${id}`)).json();
    expect(delivery.contentType).toBe(payload.contentType ?? '');
    expect(delivery.size).toBe(payload.bytes.length);
    // The list writes the same body as the single read.
    const page = (await read<DeliveryPage>(`/api/deliveries?source=${source}&limit=1`)).json();
    expect(page.items[0]?.body).toEqual(delivery.body);
    return delivery;
  };

  const problem = async (source: string, payload: Payload): Promise<{ status: number; code: string; detail: string }> => {
    const answer = await post(source, payload);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await answer.json()) as { code: string; detail: string };
    return { status: answer.status, code: body.code, detail: body.detail };
  };

  describe('text (AWS SNS posts JSON as text/plain)', () => {
    it('keeps a JSON object sent as text as that object', async () => {
      if (server === undefined) return;
      const sns = Buffer.from(
        '{\n  "Type" : "Notification",\n  "MessageId" : "22b80b92",\n  "Message" : "caf\\u00e9",\n  "Big" : 12345678901234567890\n}',
      );
      const delivery = await stored('sns', { bytes: sns, contentType: 'text/plain; charset=UTF-8' });
      expect(delivery.body).toEqual({
        Type: 'Notification',
        MessageId: '22b80b92',
        Message: 'café',
        Big: JSON.parse('12345678901234567890'),
      });
      // The sender's own JSON text, every digit kept (a line break between tokens becomes a space).
      expect((await read(`/api/deliveries/${delivery.id}`)).bytes.toString()).toContain(
        '"body":{   "Type" : "Notification",   "MessageId" : "22b80b92",   "Message" : "caf\\u00e9",   "Big" : 12345678901234567890 }',
      );
    });

    it('keeps other text as a string, decoded by its charset', async () => {
      if (server === undefined) return;
      expect((await stored('sns', { bytes: Buffer.from('hello\r\nworld ☃'), contentType: 'text/plain' })).body).toBe(
        'hello\r\nworld ☃',
      );
      expect((await stored('sns', { bytes: Buffer.from('[1,2]'), contentType: 'text/plain' })).body).toBe('[1,2]');
      const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
      expect((await stored('sns', { bytes: latin1, contentType: 'text/plain; charset=iso-8859-1' })).body).toBe('café');
      // Bytes that are not UTF-8, with no charset: replaced in the body, kept in the raw bytes.
      const broken = Buffer.from([0x61, 0xff, 0x62]);
      expect((await stored('sns', { bytes: broken, contentType: 'text/plain' })).body).toBe('a\ufffdb');
    });
  });

  describe('multipart (SendGrid, Mailgun)', () => {
    it('keeps fields and the list of files; every file downloads byte for byte, with safe headers', async () => {
      if (server === undefined) return;
      const form = new FormData();
      form.append('from', 'Ann <ann@example.com>');
      form.append('to', 'one@example.com');
      form.append('to', 'two@example.com');
      form.append('__proto__', 'just a field');
      form.append('attachment1', new Blob([BINARY], { type: 'image/png' }), 'report.png');
      form.append('attachment2', new Blob(['<svg onload="alert(1)"/>'], { type: 'image/svg+xml' }), '../../etc/\u202egpj.exe');
      form.append('attachment3', new Blob([Buffer.from('plain text\n')], { type: 'text/plain' }), 'notes.txt');
      const payload = await multipart(form);
      const delivery = await stored('mail', payload);
      expect(delivery.body).toEqual({
        fields: JSON.parse(
          '{"from":"Ann <ann@example.com>","to":["one@example.com","two@example.com"],"__proto__":"just a field"}',
        ),
        files: [
          { field: 'attachment1', filename: 'report.png', contentType: 'image/png', size: BINARY.length },
          { field: 'attachment2', filename: '\u202egpj.exe', contentType: 'image/svg+xml', size: 24 },
          { field: 'attachment3', filename: 'notes.txt', contentType: 'text/plain', size: 11 },
        ],
      });

      const png = await read(`/api/deliveries/${delivery.id}/files/0`);
      expect(png.status).toBe(200);
      expect(png.bytes.equals(BINARY)).toBe(true);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect(png.headers.get('x-content-type-options')).toBe('nosniff');
      expect(png.headers.get('content-disposition')).toBe(`attachment; filename="report.png"; filename*=UTF-8''report.png`);

      // An active type goes as octet-stream; the bidirectional override in the name is gone.
      const svg = await read(`/api/deliveries/${delivery.id}/files/1`);
      expect(svg.bytes.toString()).toBe('<svg onload="alert(1)"/>');
      expect(svg.headers.get('content-type')).toBe('application/octet-stream');
      expect(svg.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(svg.headers.get('content-disposition')).toBe(`attachment; filename="_gpj.exe"; filename*=UTF-8''_gpj.exe`);

      expect((await read(`/api/deliveries/${delivery.id}/files/2`)).bytes.toString()).toBe('plain text\n');
      for (const index of ['3', '-1', 'x', '00000000001']) {
        const missing = await read<{ code: string }>(`/api/deliveries/${delivery.id}/files/${index}`);
        expect(missing.status, index).toBe(404);
        expect(missing.json().code).toBe('not_found');
      }
    });

    it('answers 404 for files of a delivery that has none, or of no delivery, and 401 without the token', async () => {
      if (server === undefined) return;
      const text = await stored('sns', { bytes: Buffer.from('x'), contentType: 'text/plain' });
      expect((await read(`/api/deliveries/${text.id}/files/0`)).status).toBe(404);
      expect((await read('/api/deliveries/nope/files/0')).status).toBe(404);
      expect((await fetch(`${(server as RunningApp<InboxDatabase>).url}/api/deliveries/${text.id}/files/0`)).status).toBe(401);
    });

    it('refuses what is not multipart, and past its limits, with clear codes', async () => {
      if (server === undefined) return;
      expect(await problem('mail', { bytes: Buffer.from('a=1'), contentType: 'multipart/form-data' })).toMatchObject({
        status: 400,
        code: 'invalid_multipart',
        detail: expect.stringContaining('boundary'),
      });
      const form = new FormData();
      form.append('a', '1');
      const whole = await multipart(form);
      expect(await problem('mail', { ...whole, bytes: whole.bytes.subarray(0, whole.bytes.length - 8) })).toMatchObject({
        status: 400,
        code: 'invalid_multipart',
        detail: expect.stringContaining('closing boundary'),
      });

      const manyParts = new FormData();
      for (let i = 0; i <= 1000; i++) manyParts.append(`f${i}`, 'v');
      expect(await problem('mail', await multipart(manyParts))).toMatchObject({
        status: 413,
        code: 'payload_too_large',
        detail: 'The multipart body has more than 1000 parts.',
      });
      const manyFiles = new FormData();
      for (let i = 0; i <= 100; i++) manyFiles.append('file', new Blob(['x']), `f${i}.txt`);
      expect(await problem('mail', await multipart(manyFiles))).toMatchObject({
        status: 413,
        code: 'payload_too_large',
        detail: 'The multipart body has more than 100 files.',
      });
      const bigField = new FormData();
      bigField.append('html', 'x'.repeat(1024 * 1024 + 1));
      expect(await problem('mail', await multipart(bigField))).toMatchObject({
        status: 413,
        code: 'payload_too_large',
        detail: 'A field of the multipart body is larger than 1048576 bytes.',
      });
    });

    it('takes a hostile body whose large part has no form-data disposition, without stalling', async () => {
      if (server === undefined) return;
      // Written by hand: no client makes a part without Content-Disposition. busboy
      // skips such a part, and stalled for good on a large one before the parser was given room.
      const bytes = Buffer.concat([
        Buffer.from('preamble\r\n--XyZ\r\nContent-Type: text/plain\r\n\r\n'),
        Buffer.alloc(300_000, 0x61),
        Buffer.from('\r\n--XyZ\r\nContent-Disposition: form-data; name="k"\r\n\r\nv\r\n--XyZ--\r\nepilogue'),
      ]);
      const delivery = await stored('mail', { bytes, contentType: 'multipart/form-data; boundary=XyZ' });
      expect(delivery.body).toEqual({ fields: { k: 'v' }, files: [] });
    });
  });

  describe('xml', () => {
    it('keeps the text for application/xml, text/xml and application/*+xml', async () => {
      if (server === undefined) return;
      const xml = '<?xml version="1.0"?>\n<note><to a="1">Tove</to><body>&lt;b&gt;</body></note>';
      for (const contentType of ['application/xml', 'text/xml; charset=utf-8', 'application/soap+xml']) {
        expect((await stored('soap', { bytes: Buffer.from(xml), contentType })).body).toBe(xml);
      }
    });
  });

  describe('any', () => {
    it('takes any type, or none, with a null body', async () => {
      if (server === undefined) return;
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2]);
      expect((await stored('anything', { bytes: png, contentType: 'image/png' })).body).toBeNull();
      expect((await stored('anything', { bytes: Buffer.from('no type'), contentType: undefined })).body).toBeNull();
      // A type that another kind would parse, not listed beside any: kept, not parsed.
      expect((await stored('anything', { bytes: Buffer.from('{"a":1}'), contentType: 'application/json' })).body).toBeNull();
      expect((await stored('anything', { bytes: Buffer.from('[nope'), contentType: 'application/json' })).body).toBeNull();
      const unparsed = await stored('anything', { bytes: Buffer.from('a=1'), contentType: 'multipart/form-data' });
      expect(unparsed.body).toBeNull();
      expect((await read(`/api/deliveries/${unparsed.id}/files/0`)).status).toBe(404);
    });

    it('still parses the kinds listed beside it', async () => {
      if (server === undefined) return;
      expect((await stored('mixed', { bytes: Buffer.from('{"a":1}'), contentType: 'application/json' })).body).toEqual({ a: 1 });
      expect((await stored('mixed', { bytes: Buffer.from('hi'), contentType: 'text/plain' })).body).toBeNull();
      expect(await problem('mixed', { bytes: Buffer.from('{"a":'), contentType: 'application/json' })).toMatchObject({
        code: 'invalid_json',
      });
    });

    it('still refuses an empty body', async () => {
      if (server === undefined) return;
      expect(await problem('anything', { bytes: Buffer.alloc(0), contentType: 'image/png' })).toMatchObject({
        status: 400,
        code: 'empty_body',
      });
    });
  });

  describe('refusals name the setting', () => {
    it.each([
      ['text/plain', 'text'],
      ['text/plain; charset=utf-8', 'text'],
      ['multipart/form-data; boundary=x', 'multipart'],
      ['application/xml', 'xml'],
      ['application/atom+xml', 'xml'],
      ['image/png', 'any'],
      ['text/html', 'any'],
      [undefined, 'any'],
    ])('415 for %s names accept kind "%s"', async (contentType, accept) => {
      if (server === undefined) return;
      const refused = await problem('plain', { bytes: Buffer.from('x'), contentType });
      expect(refused).toMatchObject({ status: 415, code: 'unsupported_media_type' });
      expect(refused.detail).toContain(`add "${accept}" to the source's accept list`);
      expect(refused.detail).toContain('application/json');
    });

    it('415 on a source with its own list says what it takes', async () => {
      if (server === undefined) return;
      const refused = await problem('sns', { bytes: Buffer.from('{}'), contentType: 'application/json' });
      expect(refused.detail).toBe(
        'This source does not take application/json; it takes text/plain. To take it, add "json" to the source\'s accept list in the config file.',
      );
    });

    it('422 names anyJson', async () => {
      if (server === undefined) return;
      const refused = await problem('plain', { bytes: Buffer.from('[1]'), contentType: 'application/json' });
      expect(refused).toMatchObject({ status: 422, code: 'json_not_object' });
      expect(refused.detail).toContain('"anyJson: true"');
    });
  });

  it('streams text bodies as the API gives them, line breaks and all', async () => {
    if (server === undefined) return;
    const running = server;
    const stream = await connectSse(`${running.url}/api/stream?source=sns`, running.auth);
    try {
      const sent = [
        { bytes: Buffer.from('line one\r\nline two\n\n'), contentType: 'text/plain' },
        { bytes: Buffer.from('{\n"Type":\r\n"Notification"}'), contentType: 'text/plain' },
      ];
      for (const payload of sent) expect((await post('sns', payload)).status).toBe(200);
      const events = await stream.waitForEvents(2);
      expect(events.map((event) => (JSON.parse(event.data) as DeliveryView).body)).toEqual([
        'line one\r\nline two\n\n',
        { Type: 'Notification' },
      ]);
    } finally {
      stream.close();
    }
  });

  it('checks a signature over the raw bytes of every kind', async () => {
    if (server === undefined) return;
    const form = new FormData();
    form.append('a', '1');
    form.append('f', new Blob([BINARY]), 'b.bin');
    const payloads: Payload[] = [
      { bytes: Buffer.from('{"a":1}'), contentType: 'application/json' },
      { bytes: Buffer.from('a=1&a=2'), contentType: 'application/x-www-form-urlencoded' },
      await multipart(form),
      { bytes: Buffer.from('{"Type":"Notification"}'), contentType: 'text/plain' },
      { bytes: Buffer.from('<a/>'), contentType: 'application/xml' },
      { bytes: BINARY, contentType: 'application/octet-stream' },
    ];
    for (const payload of payloads) {
      const signature = `sha256=${createHmac('sha256', SECRET).update(payload.bytes).digest('hex')}`;
      const delivery = await stored('signed', payload, { 'x-hub-signature-256': signature });
      expect(delivery.verification, payload.contentType).toEqual({ status: 'verified', scheme: 'github' });
      const forged = await post('signed', payload, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` });
      expect(forged.status).toBe(401);
    }
  });
});
