import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../../src/platform/errors/problem-catalogue.js';
import { decodeCursor, decodeNameCursor, encodeCursor, encodeNameCursor } from '../../../src/platform/http/cursor.js';
import { compareNames, cursorAfterName, cursorBefore } from '../../../web/src/cursor.js';

function refusal(cursor: string): ProblemError {
  try {
    decodeCursor(cursor);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error(`"${cursor}" was accepted`);
}

const raw = (text: string): string => Buffer.from(text).toString('base64url');

describe('list cursors', () => {
  it.each([1, 62, 63, 1000, 999_999_999_999_999])('the web page makes the same cursor as the server for seq %i', (seq) => {
    expect(cursorBefore(seq)).toBe(encodeCursor(seq));
  });

  it.each([0, 1, 42, 1_000_000, 999_999_999_999_999])('round-trips seq %i', (seq) => {
    expect(decodeCursor(encodeCursor(seq))).toBe(seq);
  });

  it('is URL-safe and does not show the seq in clear', () => {
    for (const seq of [0, 7, 123_456_789, 999_999_999_999_999]) {
      const cursor = encodeCursor(seq);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(cursor).not.toContain(String(seq));
    }
  });

  it('gives different seqs different cursors', () => {
    expect(encodeCursor(1)).not.toBe(encodeCursor(10));
  });

  it.each([
    ['an empty string', ''],
    ['plain text', 'not-a-cursor'],
    ['a bare number', '42'],
    ['a negative seq', raw('s-1')],
    ['a fraction', raw('s1.5')],
    ['another prefix', raw('x42')],
    ['no digits', raw('s')],
    ['16 digits', raw(`s${'9'.repeat(16)}`)],
    ['trailing text', raw('s42;drop')],
    ['a newline', raw('s42\n')],
  ])('refuses %s with 400 invalid_query', (_label, cursor) => {
    const error = refusal(cursor);
    expect(error.code).toBe('invalid_query');
    expect(error.status).toBe(400);
  });
});

describe('sources cursors', () => {
  it.each(['a', "it's odd", 'ѕtripe\u200b', '\u{1f600}', 'x'.repeat(128)])(
    'the web page makes the same cursor as the server after %j',
    (name) => {
      expect(cursorAfterName(name)).toBe(encodeNameCursor(name));
    },
  );

  it('the web page orders names as the stores do: by code point, not by UTF-16 unit', () => {
    const names = ['\u{1f600}', '\uff5a', 'é', 'b', 'a-b', 'ab', 'a', 'B', 'A', 'a b', ''];
    expect([...names].sort(compareNames)).toEqual(['', 'A', 'B', 'a', 'a b', 'a-b', 'ab', 'b', 'é', '\uff5a', '\u{1f600}']);
    // The order of the bytes of their UTF-8, as SQLite's BINARY and PostgreSQL's COLLATE "C" compare.
    const byBytes = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...names].sort(compareNames)).toEqual(byBytes);
  });

  it.each(['a', 'stripe', "it's odd", 'ѕtripe\u200b', '\u{1f600}', 'x'.repeat(128)])(
    'round-trips the name %j, URL-safe',
    (name) => {
      const cursor = encodeNameCursor(name);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeNameCursor(cursor)).toBe(name);
    },
  );

  it.each([
    ['a deliveries cursor', encodeCursor(42)],
    ['an empty name', raw('n')],
    ['another prefix', raw('sname')],
    ['bytes that are not UTF-8', Buffer.from([0x6e, 0xc3]).toString('base64url')],
    ['a cursor with junk that base64 decoding would skip', `${encodeNameCursor('abc')}=`],
    ['plain text', 'not-a-cursor'],
  ])('refuses %s with 400 invalid_query', (_label, cursor) => {
    let caught: unknown;
    try {
      decodeNameCursor(cursor);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ProblemError);
    expect((caught as ProblemError).code).toBe('invalid_query');
  });
});
