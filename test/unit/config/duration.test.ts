import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/platform/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['1s', 1000],
    ['90s', 90_000],
    ['15m', 900_000],
    ['12h', 43_200_000],
    ['30d', 2_592_000_000],
    ['2w', 1_209_600_000],
    [' 5m ', 300_000],
    ['007s', 7000],
  ])('reads %j as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    '',
    '5',
    'm',
    '0s',
    '0ms',
    '-5m',
    '+5m',
    '1.5h',
    '5 m',
    '5M',
    '5H',
    '5y',
    '5mo',
    '1h30m',
    'ms',
    '99999999999999999999d',
    '9007199254740993ms',
  ])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
