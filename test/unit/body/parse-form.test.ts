import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../../src/platform/errors/problem-catalogue.js';
import { checkFormFields, MAX_FORM_FIELDS, parseFormBody } from '../../../src/body/parse-form.js';

const form = (text: string): Record<string, unknown> => ({ ...parseFormBody(Buffer.from(text, 'utf8')) });

function refusal(raw: Buffer): ProblemError {
  try {
    parseFormBody(raw);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('the form was accepted');
}

describe('parseFormBody (CONTRACT 1)', () => {
  it('maps each key to its value', () => {
    expect(form('a=1&b=two&c=')).toEqual({ a: '1', b: 'two', c: '' });
  });

  it('collects a repeated key into an array, in order', () => {
    expect(form('a=1&b=x&a=2&a=3')).toEqual({ a: ['1', '2', '3'], b: 'x' });
    expect(form('k=&k=')).toEqual({ k: ['', ''] });
  });

  it('takes keys literally', () => {
    expect(form('a[b]=1&a[b]=2&c.d=3&e[]=4')).toEqual({ 'a[b]': ['1', '2'], 'c.d': '3', 'e[]': '4' });
    expect(form('a%5Bb%5D=1')).toEqual({ 'a[b]': '1' });
  });

  it('decodes + as a space and percent escapes as UTF-8', () => {
    expect(form('greeting=hello+world&plus=%2B&name=caf%C3%A9&emoji=%F0%9F%93%A6&my+key=v')).toEqual({
      greeting: 'hello world',
      plus: '+',
      name: 'café',
      emoji: '📦',
      'my key': 'v',
    });
  });

  it('keeps = inside a value and takes a key without = as empty', () => {
    expect(form('token=a=b==&flag')).toEqual({ token: 'a=b==', flag: '' });
  });

  it('skips empty pairs', () => {
    expect(form('&&a=1&&')).toEqual({ a: '1' });
  });

  it('has no prototype, so __proto__ and constructor are plain keys', () => {
    const body = parseFormBody(Buffer.from('__proto__=x&constructor=y&toString=z&hasOwnProperty=w'));
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect(Object.keys(body)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    expect(body.__proto__).toBe('x');
    expect(body.constructor).toBe('y');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('treats a repeated __proto__ key as a key too', () => {
    const body = parseFormBody(Buffer.from('__proto__=1&__proto__=2'));
    expect(Object.getOwnPropertyDescriptor(body, '__proto__')?.value).toEqual(['1', '2']);
  });

  it.each(['a=%', 'a=%2', 'a=%zz', '%=1', 'a=100%', 'a=%E9', 'a=%C3', 'a=%ED%A0%80', 'a=%FF'])(
    'refuses %j with 400 invalid_form',
    (text) => {
      const error = refusal(Buffer.from(text));
      expect(error.code).toBe('invalid_form');
      expect(error.status).toBe(400);
    },
  );

  it('refuses raw bytes that are not UTF-8', () => {
    expect(refusal(Buffer.from([0x61, 0x3d, 0xe9])).code).toBe('invalid_form');
    expect(refusal(Buffer.from([0x61, 0x3d, 0xff, 0xfe])).message).toMatch(/UTF-8/);
  });
});

describe('checkFormFields', () => {
  const form = (fields: number): Buffer => Buffer.from(Array.from({ length: fields }, (_, i) => `k${i}=v`).join('&'));

  it(`lets a form of ${MAX_FORM_FIELDS} fields through and refuses one more as payload_too_large`, () => {
    expect(() => checkFormFields(form(MAX_FORM_FIELDS))).not.toThrow();
    expect(() => checkFormFields(form(1))).not.toThrow();
    expect(() => checkFormFields(form(MAX_FORM_FIELDS + 1))).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
  });

  it('counts the fields that parseFormBody reads, not the separators (a&&b is two)', () => {
    expect(() => checkFormFields(Buffer.from(`${'&'.repeat(5 * 1024 * 1024 - 4)}a=1&`))).not.toThrow();
    expect(parseFormBody(Buffer.from(`&&${'&'.repeat(MAX_FORM_FIELDS * 2)}a=1&&b&`))).toEqual({ a: '1', b: '' });
    const spread = Array.from({ length: MAX_FORM_FIELDS }, (_, i) => `k${i}`).join('&&&');
    expect(() => checkFormFields(Buffer.from(spread))).not.toThrow();
    expect(() => checkFormFields(Buffer.from(`${spread}&&x`))).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
  });
});
