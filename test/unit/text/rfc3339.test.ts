import { describe, expect, it } from 'vitest';
import { parseRfc3339 } from '../../../src/platform/text/rfc3339.js';

describe('parseRfc3339', () => {
  it('reads UTC and offsets, with and without fractions', () => {
    expect(parseRfc3339('2026-11-22T01:02:03Z')).toBe(Date.UTC(2026, 10, 22, 1, 2, 3));
    expect(parseRfc3339('2026-11-22t01:02:03.4z')).toBe(Date.UTC(2026, 10, 22, 1, 2, 3, 400));
    expect(parseRfc3339('2026-11-22 01:02:03.456789Z')).toBe(Date.UTC(2026, 10, 22, 1, 2, 3, 456));
    expect(parseRfc3339('2026-11-22T03:02:03+02:00')).toBe(Date.UTC(2026, 10, 22, 1, 2, 3));
    expect(parseRfc3339('2026-11-21T23:32:03-01:30')).toBe(Date.UTC(2026, 10, 22, 1, 2, 3));
    expect(parseRfc3339('0099-01-01T00:00:00Z')).toBe(new Date('0099-01-01T00:00:00Z').getTime());
  });

  it.each([
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T23:60:00Z',
    '2026-11-22T23:59:60Z',
    '2026-11-22T01:02:03',
    '2026-11-22',
    '2026-11-22T01:02Z',
    '2026-11-22T01:02:03+24:00',
    '1795309323456',
    'yesterday',
    ' 2026-11-22T01:02:03Z',
  ])('refuses %s', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });
});
