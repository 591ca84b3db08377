import { describe, expect, it } from 'vitest';
import { decodeText, textBodyJson } from '../../../src/body/parse-text.js';

describe('decodeText', () => {
  it('decodes by the charset parameter, UTF-8 when there is none or it is unknown', () => {
    expect(decodeText(Buffer.from('☃ snow'), 'text/plain')).toBe('☃ snow');
    expect(decodeText(Buffer.from([0xe9]), 'text/plain; charset=ISO-8859-1')).toBe('é');
    expect(decodeText(Buffer.from([0xe9]), 'text/xml; charset="windows-1252"')).toBe('é');
    expect(decodeText(Buffer.from('ok'), 'text/plain; charset=no-such-charset')).toBe('ok');
  });

  it('drops a byte order mark and replaces bytes that do not decode', () => {
    expect(decodeText(Buffer.from([0xef, 0xbb, 0xbf, 0x61]), 'text/plain')).toBe('a');
    expect(decodeText(Buffer.from([0x61, 0xc3]), 'application/xml')).toBe('a\ufffd');
  });
});

describe('textBodyJson (AWS SNS: JSON as text/plain)', () => {
  it("gives an object's own text, and nothing for other text", () => {
    expect(textBodyJson(Buffer.from('{"Type": "Notification",\n"n": 12345678901234567890}'))).toBe(
      '{"Type": "Notification", "n": 12345678901234567890}',
    );
    expect(textBodyJson(Buffer.from('[1]'))).toBeUndefined();
    expect(textBodyJson(Buffer.from('"a"'))).toBeUndefined();
    expect(textBodyJson(Buffer.from('{"a":'))).toBeUndefined();
    expect(textBodyJson(Buffer.from([0x7b, 0xff, 0x7d]))).toBeUndefined();
    expect(textBodyJson(Buffer.from('hello'))).toBeUndefined();
  });
});
