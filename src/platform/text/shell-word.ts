// Words of a command line that a person pastes into a shell (the page's
// "Copy as curl", the token line printed at first start). Imports only
// ./invisible.ts and nothing of Node: the web page bundles it too.

import { INVISIBLE_CLASS } from './invisible.js';

/**
 * What must never reach a terminal as it is: C0 and C1 controls and DEL
 * (ESC `[201~` ends a bracketed paste early, after which Ctrl-U and a
 * carriage return run whatever follows without Enter being pressed), and the
 * invisible characters (the command would not read as what it does).
 */
const UNSAFE = new RegExp(`[\\p{Cc}${INVISIBLE_CLASS}]`, 'u');

const encoder = new TextEncoder();

function hexBytes(char: string): string {
  let out = '';
  for (const byte of encoder.encode(char)) out += `\\x${byte.toString(16).padStart(2, '0')}`;
  return out;
}

/** True when `text` can go into a shell command as it is, between single quotes. */
export function isPasteSafe(text: string): boolean {
  return !UNSAFE.test(text);
}

/**
 * One shell word that stands for `text` exactly. Printable text goes
 * between single quotes, where nothing is special. Text with a control or an
 * invisible character becomes an ANSI-C quoted word (`$'…'`: bash, zsh, ksh,
 * mksh, busybox sh), in which that character is written as the `\xHH`
 * escapes of its UTF-8 bytes, so that the command itself holds printable
 * ASCII and visible characters only. `'` and `!` are escaped there too
 * (`\x27`, `\x21`): no history expansion, no quote for a reader to misjudge.
 * A NUL cannot be passed in an argument at all: that throws.
 */
export function shellWord(text: string): string {
  if (text.includes('\0')) throw new Error('A NUL character cannot be passed to a command in an argument.');
  if (isPasteSafe(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  let out = "$'";
  for (const char of text) {
    if (char === '\\') out += '\\\\';
    else if (char === "'" || char === '!' || UNSAFE.test(char)) out += hexBytes(char);
    else out += char;
  }
  return `${out}'`;
}
