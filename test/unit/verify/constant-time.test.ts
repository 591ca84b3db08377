import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, decodeBase64, decodeHex, hmac, matchingKey } from '../../../src/verify/constant-time.js';
import { sameSecretText } from '../../../src/platform/auth/same-secret.js';

describe('sameSecretText', () => {
  it('tells equal texts from different ones of any length, never throwing', () => {
    expect(sameSecretText('meta-verify-token', 'meta-verify-token')).toBe(true);
    expect(sameSecretText('meta-verify-token', 'meta-verify-tokeN')).toBe(false);
    expect(sameSecretText('meta-verify-token', 'meta')).toBe(false);
    expect(sameSecretText('', 'x')).toBe(false);
    expect(sameSecretText('é', 'e\u0301')).toBe(false);
  });
});

describe('constantTimeEqual', () => {
  it('answers true for equal bytes and false for a one-bit difference', () => {
    const a = Buffer.from('0123456789abcdef');
    const b = Buffer.from(a);
    expect(constantTimeEqual(a, b)).toBe(true);
    b[7] = (b[7] ?? 0) ^ 1;
    expect(constantTimeEqual(a, b)).toBe(false);
  });

  it('answers false, never throws, for different lengths (timingSafeEqual would throw)', () => {
    expect(() => constantTimeEqual(Buffer.alloc(32), Buffer.alloc(31))).not.toThrow();
    expect(constantTimeEqual(Buffer.alloc(32), Buffer.alloc(31))).toBe(false);
    expect(constantTimeEqual(Buffer.alloc(0), Buffer.alloc(1))).toBe(false);
    expect(constantTimeEqual(Buffer.alloc(20), Buffer.alloc(40))).toBe(false);
  });

  it('treats two empty strings as equal', () => {
    expect(constantTimeEqual(Buffer.alloc(0), new Uint8Array(0))).toBe(true);
  });
});

describe('decodeHex', () => {
  const hex = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it('decodes lower- and upper-case hex', () => {
    expect(decodeHex(hex)?.toString('hex')).toBe(hex);
    expect(decodeHex(hex.toUpperCase())?.toString('hex')).toBe(hex);
  });

  it('refuses a valid signature with junk appended, where Buffer.from stops silently', () => {
    expect(Buffer.from(`${hex}zz`, 'hex').toString('hex')).toBe(hex); // the pitfall
    expect(decodeHex(`${hex}zz`)).toBeUndefined();
  });

  it.each([
    ['odd length', `${hex}0`],
    ['a bad character inside', `${hex.slice(0, 10)}g${hex.slice(11)}`],
    ['a space', `${hex.slice(0, 32)} ${hex.slice(32)}`],
    ['a 0x prefix', `0x${hex}`],
    ['a trailing newline', `${hex}\n`],
    ['empty', ''],
    ['non-ASCII digits', '\uff10\uff10'],
  ])('refuses %s', (_name, text) => {
    expect(decodeHex(text)).toBeUndefined();
  });
});

describe('decodeBase64', () => {
  const base64 = 'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

  it('decodes padded standard base64 back to the same text', () => {
    const bytes = decodeBase64(base64);
    expect(bytes?.length).toBe(32);
    expect(bytes?.toString('base64')).toBe(base64);
    expect(decodeBase64('AAECAw==')).toEqual(Buffer.from([0, 1, 2, 3]));
  });

  it('refuses junk that Node would skip', () => {
    expect(Buffer.from(`${base64}!!`, 'base64').toString('base64')).toBe(base64); // the pitfall
    expect(decodeBase64(`${base64}!!`)).toBeUndefined();
    expect(decodeBase64(`${base64.slice(0, 10)}*${base64.slice(10)}`)).toBeUndefined();
  });

  it.each([
    ['data after the padding', `${base64}zz`],
    ['a whole extra group', `${base64.slice(0, -1)}AAAA`],
    ['missing padding', base64.slice(0, -1)],
    ['extra padding', `${base64}=`],
    ['the URL-safe alphabet', 'g0hM9SsE-OTPJTGt_tmIKtSyZlE3uFJELVlNIOLJ1OE='],
    ['a non-canonical last character (unused bits set)', 'AAECAx=='],
    ['a space', `${base64.slice(0, 8)} ${base64.slice(8)}`],
    ['a newline', `${base64}\n`],
    ['empty', ''],
    ['padding alone', '===='],
    ['a single character', 'A'],
  ])('refuses %s', (_name, text) => {
    expect(decodeBase64(text)).toBeUndefined();
  });
});

describe('hmac', () => {
  it('hashes its parts as one string', () => {
    const whole = createHmac('sha256', 'key').update('v0:123:body').digest();
    expect(hmac('sha256', 'key', 'v0:', '123', ':', Buffer.from('body'))).toEqual(whole);
    expect(hmac('sha1', 'key', 'x')).toHaveLength(20);
    expect(hmac('sha512', 'key', 'x')).toHaveLength(64);
  });
});

describe('matchingKey', () => {
  const sign = (key: string): Buffer => hmac('sha256', key, 'payload');

  it('answers the index of the key that signs a candidate', () => {
    expect(matchingKey(['a', 'b', 'c'], [sign('b')], sign)).toBe(1);
    expect(matchingKey(['a', 'b'], [Buffer.alloc(32), sign('a')], sign)).toBe(0);
  });

  it('answers -1 when no key signs any candidate, whatever their lengths', () => {
    expect(matchingKey(['a', 'b'], [sign('c'), Buffer.alloc(3), Buffer.alloc(0)], sign)).toBe(-1);
    expect(matchingKey(['a'], [], sign)).toBe(-1);
  });

  it('accepts several signed forms per key', () => {
    expect(
      matchingKey(['a'], [hmac('sha256', 'a', 'two')], (key) => [hmac('sha256', key, 'one'), hmac('sha256', key, 'two')]),
    ).toBe(0);
  });
});
