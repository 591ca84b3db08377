// Characters that change what a text looks like without being seen. Source
// names and payloads are hostile: `stripe` followed by U+200B reads as
// `stripe`, and U+202E turns the text after it around. Whatever shows such
// text (the web page, the command line's output, the shell commands the page
// builds) shows these characters as escapes.
//
// This file imports nothing and uses nothing of Node: the web page (web/)
// bundles it as it is, so the page and the command line share one list.

/**
 * The invisible characters, as the body of a regular expression class (flag
 * `u`): format characters (Cf: zero-width spaces and joiners, bidirectional
 * controls, the BOM, the soft hyphen, U+180E, tags), every other
 * default-ignorable code point (the Hangul fillers U+115F, U+1160, U+3164
 * and U+FFA0, variation selectors, the combining grapheme joiner U+034F,
 * Mongolian free variation selectors, unassigned U+2065 and U+FFF0 to
 * U+FFF8), line and paragraph separators (Zl, Zp), and U+2800, the blank
 * Braille pattern that renders as a space but is not one.
 * C0 and C1 controls are left to each caller: the page keeps tabs and line
 * breaks in a raw body, a terminal gets none of them.
 */
export const INVISIBLE_CLASS = '\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Zl}\\p{Zp}\\u2800';

/** Bidirectional controls (a subset of the invisible characters): marks, embeddings, overrides and isolates. */
export const BIDI_CONTROL = /^[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]$/u;

/**
 * The zero-width joiner, the text and emoji variation selectors, and the
 * tags: an emoji is drawn from several code points joined by these (U+200D
 * between the people of a family, U+FE0F after a heart, tags after the
 * black flag for Scotland). Inside a whole emoji sequence that Unicode
 * recommends (RGI), they are part of a visible picture and stay as they are;
 * anywhere else they are escaped like the others.
 */
function joinsEmoji(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return code === 0x200d || code === 0xfe0e || code === 0xfe0f || (code >= 0xe0020 && code <= 0xe007f);
}

// Built from a string: the `v` flag (Node 20, Chromium 112) is newer than the
// ES2022 that the compilers target, which would refuse it in a literal.
const EMOJI_AT = new RegExp('\\p{RGI_Emoji}', 'vy');
/** Code units of the longest RGI emoji sequence (a kiss with two skin tones: 15), with room to spare. */
const LONGEST_EMOJI = 24;

const scanners = new Map<string, RegExp>();

function scanner(extraClass: string): RegExp {
  let found = scanners.get(extraClass);
  if (found === undefined) {
    found = new RegExp(`[${INVISIBLE_CLASS}${extraClass}]`, 'gu');
    scanners.set(extraClass, found);
  }
  return found;
}

/** The end of an RGI emoji sequence that starts at or after `from` and covers `index`, if there is one. */
function emojiCovering(text: string, index: number, from: number): number | undefined {
  for (let start = Math.max(from, index - LONGEST_EMOJI); start <= index; start++) {
    EMOJI_AT.lastIndex = start;
    const match = EMOJI_AT.exec(text);
    if (match !== null && start + match[0].length > index) return start + match[0].length;
  }
  return undefined;
}

/**
 * `text` cut around the characters to show as escapes, as `String#split`
 * with a capturing group would: even indexes hold text (possibly empty), odd
 * ones one such character each. They are the invisible characters (save
 * inside an emoji sequence) and those of `extraClass`, the body of a class
 * such as `\\p{Cc}`.
 */
export function splitInvisible(text: string, extraClass = ''): string[] {
  const scan = scanner(extraClass);
  scan.lastIndex = 0;
  const pieces: string[] = [];
  let textStart = 0;
  for (let match = scan.exec(text); match !== null; match = scan.exec(text)) {
    const char = match[0];
    if (joinsEmoji(char)) {
      const end = emojiCovering(text, match.index, textStart);
      if (end !== undefined) {
        scan.lastIndex = end;
        continue;
      }
    }
    pieces.push(text.slice(textStart, match.index), char);
    textStart = match.index + char.length;
  }
  pieces.push(text.slice(textStart));
  return pieces;
}

/** True when `text` holds a character that `splitInvisible` would cut out. */
export function hasInvisible(text: string, extraClass = ''): boolean {
  return splitInvisible(text, extraClass).length > 1;
}

/** A character as an escape a person can read: `\u200b`, `\u{e0041}`. */
export function codePointEscape(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
