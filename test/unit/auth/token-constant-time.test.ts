import { describe, expect, it, vi } from 'vitest';

// The real crypto, with timingSafeEqual watched: a token must never be compared with `===`.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const { timingSafeEqual } = await import('node:crypto');
const { tokenMatches } = await import('../../../src/platform/auth/token.js');

/** CONTRACT 3 / issue 2: the API token is compared in constant time, and its length does not show either. */
describe('tokenMatches in constant time', () => {
  it.each([
    ['the token itself', 'rcp_0123456789abcdefghij', true],
    ['one character off', 'rcp_0123456789abcdefghik', false],
    ['a prefix', 'rcp_0', false],
    ['a much longer text', 'x'.repeat(10_000), false],
  ])('compares %s as two SHA-256 digests of the same length with timingSafeEqual', (_label, presented, expected) => {
    const watched = vi.mocked(timingSafeEqual);
    watched.mockClear();
    expect(tokenMatches('rcp_0123456789abcdefghij', presented)).toBe(expected);
    expect(watched).toHaveBeenCalledTimes(1);
    const [a, b] = watched.mock.calls[0] ?? [];
    expect([a?.byteLength, b?.byteLength]).toEqual([32, 32]);
  });
});
