import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../../src/platform/errors/problem-catalogue.js';
import { scanJson } from '../../../src/body/json-scan.js';
import { jsonBodyText, MAX_JSON_DEPTH, parseJsonBody } from '../../../src/body/parse-json.js';

function refusal(raw: Buffer, anyValue = false): ProblemError {
  try {
    parseJsonBody(raw, anyValue);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('the body was accepted');
}

/** An object that nests `depth` levels: objects around arrays. */
function nested(depth: number): string {
  return `{"a":${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}}`;
}

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('parseJsonBody (CONTRACT 1)', () => {
  it('returns the parsed object', () => {
    expect(parseJsonBody(utf8('{"event":"push","n":1,"list":[1,"two",null],"deep":{"x":true}}'))).toEqual({
      event: 'push',
      n: 1,
      list: [1, 'two', null],
      deep: { x: true },
    });
  });

  describe('depth', () => {
    it(`accepts ${MAX_JSON_DEPTH} levels`, () => {
      expect(parseJsonBody(utf8(nested(1000)))).toHaveProperty('a');
      const objects = `${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`;
      expect(parseJsonBody(utf8(objects))).toHaveProperty('a');
    });

    it('refuses 1001 levels with invalid_json', () => {
      const error = refusal(utf8(nested(1001)));
      expect(error.code).toBe('invalid_json');
      expect(error.message).toMatch(/deeper than 1000/);
      expect(refusal(utf8(`${'{"a":'.repeat(1001)}1${'}'.repeat(1001)}`)).code).toBe('invalid_json');
    });

    it('refuses far deeper nesting without overflowing the stack', () => {
      expect(refusal(utf8('['.repeat(1_000_000)), true).code).toBe('invalid_json');
    });

    it('does not count brackets inside strings', () => {
      const body = `{"a":"${'['.repeat(5000)}","b":"${'{'.repeat(5000)}"}`;
      expect(parseJsonBody(utf8(body))).toEqual({ a: '['.repeat(5000), b: '{'.repeat(5000) });
    });

    it('does not end a string at an escaped quote', () => {
      // Were `\"` taken as the end of the string, the brackets after it would count.
      const body = `{"a":"\\"${'['.repeat(1500)}"}`;
      expect(parseJsonBody(utf8(body))).toEqual({ a: `"${'['.repeat(1500)}` });
    });

    it('ends a string after an escaped backslash, so that the brackets after it count', () => {
      const body = `{"a":"\\\\","b":${'['.repeat(1000)}${']'.repeat(1000)}}`;
      expect(refusal(utf8(body)).message).toMatch(/deeper than 1000/);
      const fits = `{"a":"\\\\","b":${'['.repeat(999)}${']'.repeat(999)}}`;
      expect(parseJsonBody(utf8(fits))).toHaveProperty('a', '\\');
    });

    it('counts depth, not the total number of brackets', () => {
      const wide = `{"a":[${Array.from({ length: 3000 }, () => '[[]]').join(',')}]}`;
      expect(scanJson(utf8(wide), 4).ok).toBe(true);
      expect(scanJson(utf8(wide), 3)).toMatchObject({ ok: false, tooDeep: true });
      expect(parseJsonBody(utf8(wide))).toHaveProperty('a');
    });
  });

  describe('encoding', () => {
    it('accepts a UTF-8 byte order mark', () => {
      const raw = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"a":"é"}')]);
      expect(parseJsonBody(raw)).toEqual({ a: 'é' });
    });

    it('keeps non-ASCII text', () => {
      expect(parseJsonBody(utf8('{"name":"Zoë 📦","escaped":"\\u00e9"}'))).toEqual({ name: 'Zoë 📦', escaped: 'é' });
    });

    it.each([
      ['0xFF', [0xff]],
      ['a lone continuation byte', [0x80]],
      ['a truncated sequence', [0xc3]],
      ['an overlong slash', [0xc0, 0xaf]],
      ['an encoded surrogate', [0xed, 0xa0, 0x80]],
      ['Latin-1 é', [0xe9]],
    ])('refuses %s inside a string as invalid_json', (_label, bytes) => {
      const raw = Buffer.concat([utf8('{"a":"'), Buffer.from(bytes), utf8('"}')]);
      const error = refusal(raw);
      expect(error.code).toBe('invalid_json');
      expect(error.message).toMatch(/UTF-8/);
    });

    it('refuses UTF-16', () => {
      expect(refusal(Buffer.from('\ufeff{"a":1}', 'utf16le')).code).toBe('invalid_json');
    });
  });

  describe('prototype keys', () => {
    it('keeps __proto__ and constructor as own properties and changes no prototype', () => {
      const text = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"a":{"__proto__":[1]}}';
      const body = parseJsonBody(utf8(text)) as Record<string, unknown>;
      expect(Object.hasOwn(body, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(body, '__proto__')?.value).toEqual({ polluted: true });
      expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
      expect(body.polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
      const inner = body.a as Record<string, unknown>;
      expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
      expect(Array.isArray(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value)).toBe(true);
      expect(JSON.stringify(body)).toBe(text);
    });
  });

  describe('the top level', () => {
    it.each(['[]', '[1,2]', '"text"', '42', 'true', 'null'])('refuses %s with 422 json_not_object', (text) => {
      const error = refusal(utf8(text));
      expect(error.code).toBe('json_not_object');
      expect(error.status).toBe(422);
    });

    it.each([
      ['[1,2]', [1, 2]],
      ['"text"', 'text'],
      ['42', 42],
      ['null', null],
    ])('accepts %s when any value is allowed', (text, value) => {
      expect(parseJsonBody(utf8(text), true)).toEqual(value);
    });
  });

  it.each(['{', '{"a":1,}', "{'a':1}", '{"a":1}x', '{"a":NaN}', '', ' ', '{"a":"\n"}', '{"a":01}'])(
    'refuses %j with 400 invalid_json',
    (text) => {
      const error = refusal(utf8(text));
      expect(error.code).toBe('invalid_json');
      expect(error.status).toBe(400);
    },
  );

  it('says where the JSON went wrong, with the byte shown safely', () => {
    expect(refusal(utf8('{"a":1,}')).message).toBe("The body is not valid JSON: unexpected '}' where a key belongs at byte 7.");
    expect(refusal(utf8('{"a":\u001b[31m}')).message).toBe(
      'The body is not valid JSON: unexpected byte 0x1b where a value belongs at byte 5.',
    );
    expect(refusal(utf8('{"a":"x')).message).toBe('The body is not valid JSON: the text ends early at byte 7.');
  });
});

describe('jsonBodyText', () => {
  it("gives the sender's text, without a byte order mark, line breaks as spaces", () => {
    const raw = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{\r\n  "a" : 1.50,\n"a":"x\\ny"\t}')]);
    const text = jsonBodyText(raw);
    expect(text).toBe('{    "a" : 1.50, "a":"x\\ny"\t}');
    expect(JSON.parse(text ?? '')).toEqual({ a: 'x\ny' });
  });

  it('keeps the digits of numbers that a double cannot hold', () => {
    expect(jsonBodyText(utf8('{"id":123456789012345678901234567890}'))).toBe('{"id":123456789012345678901234567890}');
  });

  it.each([
    ['not JSON', utf8('{"a":')],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
    ['too deep', utf8(nested(1001))],
  ])('is undefined for %s', (_name, raw) => {
    expect(jsonBodyText(raw)).toBeUndefined();
  });
});
