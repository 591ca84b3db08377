import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../../src/platform/errors/problem-catalogue.js';
import { MULTIPART_LIMITS, multipartFile, parseMultipart } from '../../../src/body/parse-multipart.js';

/** A multipart body as the platform's FormData encodes it. */
async function encode(form: FormData): Promise<{ raw: Buffer; contentType: string }> {
  const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { raw: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') ?? '' };
}

async function refusal(raw: Buffer, contentType: string): Promise<ProblemError> {
  const error: unknown = await parseMultipart(raw, contentType).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ProblemError);
  return error as ProblemError;
}

describe('parseMultipart (CONTRACT 9)', () => {
  it('keeps fields (arrays for repeated names) and the name, type and size of each file', async () => {
    const form = new FormData();
    form.append('subject', 'Hello ☃');
    form.append('to', 'a@example.com');
    form.append('to', 'b@example.com');
    form.append('file', new Blob([new Uint8Array(100_000)], { type: 'Image/PNG' }), 'C:\\Users\\me\\pic.png');
    form.append('blob', new Blob(['x']));
    const { raw, contentType } = await encode(form);
    const body = await parseMultipart(raw, contentType);
    expect(body).toEqual({
      fields: Object.assign(Object.create(null) as object, { subject: 'Hello ☃', to: ['a@example.com', 'b@example.com'] }),
      files: [
        { field: 'file', filename: 'pic.png', contentType: 'image/png', size: 100_000 },
        { field: 'blob', filename: 'blob', contentType: 'application/octet-stream', size: 1 },
      ],
    });
  });

  it('keeps keys such as __proto__ as plain fields', async () => {
    const form = new FormData();
    form.append('__proto__', 'x');
    form.append('constructor', 'y');
    const { raw, contentType } = await encode(form);
    const { fields } = await parseMultipart(raw, contentType);
    expect(Object.getPrototypeOf(fields)).toBeNull();
    expect(fields.__proto__).toBe('x');
    expect(fields.constructor).toBe('y');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('refuses a body without a boundary, or cut before its closing one, as invalid_multipart', async () => {
    const form = new FormData();
    form.append('a', '1');
    const { raw, contentType } = await encode(form);
    expect((await refusal(raw, 'multipart/form-data')).code).toBe('invalid_multipart');
    expect((await refusal(raw.subarray(0, raw.length - 5), contentType)).code).toBe('invalid_multipart');
    expect((await refusal(raw, 'multipart/form-data; boundary=another')).code).toBe('invalid_multipart');
    expect((await refusal(raw, `multipart/form-data; boundary=${'b'.repeat(300)}`)).code).toBe('invalid_multipart');
  });

  it('refuses more parts, more files or a longer field than its limits, as payload_too_large', async () => {
    const parts = new FormData();
    for (let i = 0; i <= MULTIPART_LIMITS.parts; i++) parts.append('p', String(i));
    const tooManyParts = await encode(parts);
    expect(await refusal(tooManyParts.raw, tooManyParts.contentType)).toMatchObject({
      code: 'payload_too_large',
      message: 'The multipart body has more than 1000 parts.',
    });
    const exactly = new FormData();
    for (let i = 0; i < MULTIPART_LIMITS.parts; i++) exactly.append('p', String(i));
    const atTheLimit = await encode(exactly);
    expect((await parseMultipart(atTheLimit.raw, atTheLimit.contentType)).fields.p).toHaveLength(1000);

    const files = new FormData();
    for (let i = 0; i <= MULTIPART_LIMITS.files; i++) files.append('f', new Blob(['x']), `${i}.txt`);
    const tooManyFiles = await encode(files);
    expect((await refusal(tooManyFiles.raw, tooManyFiles.contentType)).message).toBe(
      'The multipart body has more than 100 files.',
    );

    const field = new FormData();
    field.append('big', 'x'.repeat(MULTIPART_LIMITS.fieldBytes + 1));
    const tooLong = await encode(field);
    expect(await refusal(tooLong.raw, tooLong.contentType)).toMatchObject({ code: 'payload_too_large' });
  });

  it('does not stall on a large part that busboy skips (no form-data Content-Disposition)', async () => {
    const raw = Buffer.concat([
      Buffer.from('--B\r\nContent-Type: text/plain\r\n\r\n'),
      Buffer.alloc(1_000_000, 0x61),
      Buffer.from('\r\n--B\r\nContent-Disposition: attachment; name="x"\r\n\r\n'),
      Buffer.alloc(200_000, 0x62),
      Buffer.from('\r\n--B\r\nContent-Disposition: form-data; name="k"\r\n\r\nv\r\n--B--'),
    ]);
    expect(await parseMultipart(raw, 'multipart/form-data; boundary=B')).toEqual({ fields: { k: 'v' }, files: [] });
  });
});

describe('multipartFile', () => {
  it("gives each file's bytes exactly, and undefined past the last or for a body that no longer parses", async () => {
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('\r\n--\r\n')]);
    const form = new FormData();
    form.append('note', 'text field, not a file');
    form.append('one', new Blob([bytes], { type: 'application/pdf' }), 'one.pdf');
    form.append('two', new Blob([Buffer.alloc(200_000, 7)]), 'two.bin');
    const { raw, contentType } = await encode(form);
    const first = await multipartFile(raw, contentType, 0);
    expect(first?.bytes.equals(bytes)).toBe(true);
    expect(first?.file).toEqual({ field: 'one', filename: 'one.pdf', contentType: 'application/pdf', size: bytes.length });
    expect((await multipartFile(raw, contentType, 1))?.bytes.equals(Buffer.alloc(200_000, 7))).toBe(true);
    expect(await multipartFile(raw, contentType, 2)).toBeUndefined();
    expect(await multipartFile(raw, 'multipart/form-data', 0)).toBeUndefined();
  });
});
