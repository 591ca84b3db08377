import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../../src/platform/errors/problem-catalogue.js';
import { decodeSourceName, MAX_SOURCE_CHARS } from '../../../src/platform/http/source-name.js';

function refusal(segment: string): ProblemError {
  try {
    decodeSourceName(segment);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error(`"${segment}" was accepted`);
}

describe('decodeSourceName (CONTRACT 1)', () => {
  it.each([
    ['stripe', 'stripe'],
    ['GitHub', 'GitHub'],
    ['my-app_2.prod', 'my-app_2.prod'],
    ['caf%C3%A9', 'café'],
    ['%F0%9F%93%A6', '📦'],
    ['a%20b', 'a b'],
    ['...', '...'],
    ['.hidden', '.hidden'],
    ['%25', '%'],
    ['%3F%23', '?#'],
    ['x', 'x'],
  ])('accepts %j as %j', (segment, name) => {
    expect(decodeSourceName(segment)).toBe(name);
  });

  it('keeps the case: names differing in case are different sources', () => {
    expect(decodeSourceName('Stripe')).not.toBe(decodeSourceName('stripe'));
  });

  it('accepts 128 characters, counted as Unicode characters, not UTF-16 units or bytes', () => {
    expect(decodeSourceName('a'.repeat(MAX_SOURCE_CHARS))).toHaveLength(128);
    const emoji = '📦'.repeat(128);
    expect(decodeSourceName(encodeURIComponent(emoji))).toBe(emoji);
    const accented = encodeURIComponent('é'.repeat(128));
    expect(decodeSourceName(accented)).toBe('é'.repeat(128));
  });

  it.each([
    ['129 ASCII characters', 'a'.repeat(129)],
    ['129 emoji', encodeURIComponent('📦'.repeat(129))],
  ])('refuses %s', (_label, segment) => {
    expect(refusal(segment).message).toMatch(/longer than 128/);
  });

  it('refuses an empty name', () => {
    expect(refusal('').code).toBe('invalid_source');
  });

  it.each(['%2F', 'a%2Fb', '%2f', 'a/b'])('refuses a slash: %j', (segment) => {
    expect(refusal(segment).message).toMatch(/"\/"/);
  });

  it.each(['.', '..', '%2E', '%2E%2E', '.%2e'])('refuses the dot names: %j', (segment) => {
    expect(refusal(segment).message).toMatch(/"\." or "\.\."/);
  });

  it.each([
    ['NUL', '%00'],
    ['a newline', 'a%0Ab'],
    ['a carriage return', 'a%0D'],
    ['a tab', '%09x'],
    ['escape', '%1B'],
    ['DEL', 'x%7F'],
    ['a C1 control (U+0080)', '%C2%80'],
    ['a C1 control (U+009F)', 'x%C2%9F'],
  ])('refuses %s', (_label, segment) => {
    expect(refusal(segment).message).toMatch(/control/);
  });

  it.each([
    ['a lone continuation byte', '%80'],
    ['0xFF', 'a%FF'],
    ['a truncated sequence', '%C3'],
    ['an overlong encoding', '%C0%AF'],
    ['an encoded surrogate', '%ED%A0%80'],
    ['a bad escape', '%zz'],
    ['a lone percent sign', 'a%'],
    ['a short escape', '%4'],
  ])('refuses %s as not valid UTF-8', (_label, segment) => {
    expect(refusal(segment).message).toMatch(/percent-encoded UTF-8/);
  });

  it('refuses with 400 invalid_source', () => {
    const error = refusal('..');
    expect(error.code).toBe('invalid_source');
    expect(error.status).toBe(400);
  });
});
