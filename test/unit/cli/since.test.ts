import { describe, expect, it } from 'vitest';
import { parseSince } from '../../../src/cli/export.js';

describe('export --since', () => {
  it('reads RFC 3339 times, dates and durations', () => {
    expect(parseSince('2026-11-22T10:00:00+01:00')).toBe(Date.parse('2026-11-22T09:00:00Z'));
    expect(parseSince('2024-02-29')).toBe(Date.parse('2024-02-29T00:00:00Z'));
    expect(parseSince('2026-12-31T23:59:59.999Z')).toBe(Date.parse('2026-12-31T23:59:59.999Z'));
    expect(parseSince('24h', 100_000_000)).toBe(100_000_000 - 24 * 3600 * 1000);
  });

  it.each([
    '2026-02-30',
    '2025-02-29',
    '2026-13-01',
    '2026-04-31T00:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-00-10',
  ])('refuses %s, which is on no calendar or clock', (text) => {
    expect(() => parseSince(text)).toThrow(/--since: expected an RFC 3339 time/);
  });
});
