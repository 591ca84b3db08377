import { describe, expect, it } from 'vitest';
import { codePointEscape, hasInvisible, splitInvisible } from '../../../src/platform/text/invisible.js';

/** The text with each character cut out shown as its escape, as the page and the terminal show it. */
function shown(text: string, extraClass = ''): string {
  return splitInvisible(text, extraClass)
    .map((piece, index) => (index % 2 === 0 ? piece : codePointEscape(piece)))
    .join('');
}

describe('invisible characters', () => {
  it.each([
    ['zero-width space', '\u200b', '\\u200b'],
    ['zero-width non-joiner', '\u200c', '\\u200c'],
    ['zero-width joiner alone', '\u200d', '\\u200d'],
    ['word joiner', '\u2060', '\\u2060'],
    ['invisible times', '\u2062', '\\u2062'],
    ['BOM', '\ufeff', '\\ufeff'],
    ['soft hyphen', '\u00ad', '\\u00ad'],
    ['Mongolian vowel separator', '\u180e', '\\u180e'],
    ['Hangul choseong filler', '\u115f', '\\u115f'],
    ['Hangul jungseong filler', '\u1160', '\\u1160'],
    ['Hangul filler', '\u3164', '\\u3164'],
    ['halfwidth Hangul filler', '\uffa0', '\\uffa0'],
    ['combining grapheme joiner', '\u034f', '\\u034f'],
    ['variation selector 1', '\ufe00', '\\ufe00'],
    ['variation selector 16 after a letter', '\ufe0f', '\\ufe0f'],
    ['variation selector 17', '\u{e0100}', '\\u{e0100}'],
    ['Mongolian free variation selector', '\u180b', '\\u180b'],
    ['a tag', '\u{e0041}', '\\u{e0041}'],
    ['right-to-left override', '\u202e', '\\u202e'],
    ['first strong isolate', '\u2068', '\\u2068'],
    ['Arabic letter mark', '\u061c', '\\u061c'],
    ['line separator', '\u2028', '\\u2028'],
    ['paragraph separator', '\u2029', '\\u2029'],
    ['interlinear annotation anchor', '\ufff9', '\\ufff9'],
    ['Braille blank', '\u2800', '\\u2800'],
    ['unassigned default-ignorable U+2065', '\u2065', '\\u2065'],
  ])('shows a %s as an escape', (_name, char, escape) => {
    expect(shown(`stripe${char}`)).toBe(`stripe${escape}`);
    expect(shown(`${char}a${char}`)).toBe(`${escape}a${escape}`);
    expect(hasInvisible(`x${char}`)).toBe(true);
  });

  it('leaves visible text alone, however foreign: letters, marks, spaces, emoji', () => {
    for (const text of [
      'stripe',
      'ѕtripe',
      'café',
      'cafe\u0301',
      'a b\u00a0c',
      '日本語',
      'עברית',
      'tab\there',
      'line\nbreak',
      '\u{1f600}',
    ]) {
      expect(splitInvisible(text)).toEqual([text]);
      expect(hasInvisible(text)).toBe(false);
    }
  });

  it('keeps joiners and selectors inside a whole emoji, and escapes them outside one', () => {
    const family = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}';
    const heart = '\u2764\ufe0f';
    const keycap = '1\ufe0f\u20e3';
    const scotland = '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}';
    const kiss = '\u{1f469}\u{1f3fb}\u200d\u2764\ufe0f\u200d\u{1f48b}\u200d\u{1f468}\u{1f3fc}';
    for (const emoji of [family, heart, keycap, scotland, kiss]) {
      expect(splitInvisible(`a ${emoji} b ${emoji}${emoji}`)).toEqual([`a ${emoji} b ${emoji}${emoji}`]);
    }
    expect(shown(`stripe\u200d`)).toBe('stripe\\u200d');
    expect(shown(`${heart}\u200d`)).toBe(`${heart}\\u200d`);
    expect(shown('e\ufe0f')).toBe('e\\ufe0f');
    expect(shown('\u{e0067}\u{e007f}')).toBe('\\u{e0067}\\u{e007f}');
    // An escaped joiner does not count as the start of an emoji after it.
    expect(shown(`\u200d${heart}`)).toBe(`\\u200d${heart}`);
  });

  it('cuts out the characters of an extra class too, such as C0 and C1 controls', () => {
    expect(splitInvisible('a\x1b[201~\x15b\u009b', '\\p{Cc}')).toEqual(['a', '\x1b', '[201~', '\x15', 'b', '\u009b', '']);
    expect(splitInvisible('a\x1bb')).toEqual(['a\x1bb']);
  });

  it('stays fast on half a megabyte of text with emoji and invisible characters in it', () => {
    const text = `${'{"text": "hello \u2764\ufe0f and \u{1f44d}\u{1f3fd} there", "n": 12345}\n'.repeat(8000)}\u200b`;
    const started = performance.now();
    const pieces = splitInvisible(text);
    const ms = performance.now() - started;
    expect(pieces).toHaveLength(3);
    // Linear: about 0.1 s here; quadratic work would take minutes.
    expect(ms).toBeLessThan(1500);
  });
});
