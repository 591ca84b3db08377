// How many terminal columns a text takes, for the command line's aligned
// columns. The text is already escaped for the terminal (terminal-safe.ts):
// no controls and no invisible characters are left, only what is drawn.

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * East Asian wide and fullwidth characters (Hangul jamo, CJK, kana, Hangul
 * syllables, fullwidth forms, the supplementary ideographic planes): two
 * columns each, as terminals draw them.
 */
const WIDE =
  /^[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;

/** Drawn as an emoji (two columns): an emoji-presentation character, or a pictograph followed by U+FE0F. */
const EMOJI = /^(\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f)/u;

/** The columns `text` takes on a terminal: a grapheme (a letter with its accents, a whole emoji) is one, a wide one two. */
export function displayWidth(text: string): number {
  // ASCII, the common case: one column a character.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += EMOJI.test(segment) || WIDE.test(segment) ? 2 : 1;
  return width;
}

/** `text` followed by spaces up to `width` columns (nothing added when it is as wide already). */
export function padToWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
