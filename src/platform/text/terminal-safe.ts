// Text on its way to a terminal (the CLI's output, config messages): what a
// payload or a file could hide in it is made visible.

import { codePointEscape, splitInvisible } from './invisible.js';

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/**
 * Makes text safe to print: C0 and C1 controls and DEL (escape sequences,
 * carriage returns, bells) and every invisible character of
 * src/platform/text/invisible.ts (bidirectional controls, zero-width characters,
 * fillers, variation selectors outside an emoji, line separators, the BOM)
 * become visible escapes such as `\e`, `\x9b`, `\u202e` or `\u{e0041}`.
 */
export function escapeForTerminal(text: string): string {
  return splitInvisible(text, '\\p{Cc}')
    .map((piece, index) => {
      if (index % 2 === 0) return piece;
      const named = NAMED[piece];
      if (named !== undefined) return named;
      const code = piece.codePointAt(0) ?? 0;
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : codePointEscape(piece);
    })
    .join('');
}

/**
 * Compact JSON made safe for a terminal without changing what it means:
 * JSON.stringify already escapes C0 controls; DEL, C1 controls and the
 * invisible characters can only be inside strings, where `\uXXXX` (a
 * surrogate pair beyond the BMP) is the same character.
 */
export function escapeJsonForTerminal(json: string): string {
  return splitInvisible(json, '\\u007f-\\u009f')
    .map((piece, index) => {
      if (index % 2 === 0) return piece;
      let out = '';
      for (let i = 0; i < piece.length; i++) out += `\\u${piece.charCodeAt(i).toString(16).padStart(4, '0')}`;
      return out;
    })
    .join('');
}
