import { describe, expect, it } from 'vitest';
import { narrows, prefixBound } from '../../../src/deliveries/delivery-filter.js';
import { chunkCount, CHUNK_CHARS, CHUNK_OVERLAP, trigramQuery } from '../../../src/search/sqlite-search.js';

/** Code point order, as SQLite's BINARY and PostgreSQL's COLLATE "C" compare. */
const byCodePoints = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('prefixBound', () => {
  it('is greater than every string that begins with the prefix, and than no other above it', () => {
    for (const prefix of ['invoice.', 'a', 'z\uffff', '\ud7ff', '日本', 'a\u{10ffff}']) {
      const bound = prefixBound(prefix) as string;
      for (const tail of ['', 'x', '\u{10ffff}\u{10ffff}', '\uffff', '\u{1f600}']) {
        expect(byCodePoints(prefix + tail, bound)).toBeLessThan(0);
      }
      expect(byCodePoints(bound, prefix)).toBeGreaterThan(0);
      expect(bound.startsWith(prefix)).toBe(false);
    }
    expect(prefixBound('a\ud7ff')).toBe('a\ue000');
    expect(prefixBound('ab\u{10ffff}')).toBe('ac');
    expect(prefixBound('')).toBeUndefined();
    expect(prefixBound('\u{10ffff}')).toBeUndefined();
  });

  it('narrows says whether a filter narrows anything', () => {
    expect(narrows({})).toBe(false);
    expect(narrows({ eventType: { prefix: '' } })).toBe(true);
    expect(narrows({ since: 0 })).toBe(true);
  });
});

describe('the SQLite search index', () => {
  it("asks for every distinct trigram of the text, quoted, case folded by FTS5's own rule", () => {
    expect(trigramQuery('ab')).toBeUndefined();
    expect(trigramQuery('abcd')).toBe('"abc" AND "bcd"');
    expect(trigramQuery('aAaA')).toBe('"AaA"');
    expect(trigramQuery('a"b"')).toBe('"a""b" AND """b"""');
    expect(trigramQuery('日本語x')).toBe('"日本語" AND "本語x"');
    expect(trigramQuery('\u{1f600}ab')).toBe('"\u{1f600}ab"');
  });

  it('asks for the four rarest trigrams only, when it knows how common each is, ties in the order they come', () => {
    const seen: Record<string, number> = { use: 900, ser: 900, er1: 300, r12: 20, '123': 50, '234': 5, '34@': 0, '4@x': 0 };
    expect(trigramQuery('USER1234@x', (trigram) => seen[trigram] ?? 1000)).toBe('"34@" AND "4@x" AND "234" AND "R12"');
  });

  it('cuts text into overlapping chunks', () => {
    expect(chunkCount('x')).toBe(1);
    expect(chunkCount('x'.repeat(CHUNK_CHARS + CHUNK_OVERLAP))).toBe(1);
    expect(chunkCount('x'.repeat(CHUNK_CHARS + CHUNK_OVERLAP + 1))).toBe(2);
    expect(chunkCount('x'.repeat(2 * CHUNK_CHARS + CHUNK_OVERLAP))).toBe(2);
  });
});
