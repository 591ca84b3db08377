import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isPasteSafe, shellWord } from '../../../src/platform/text/shell-word.js';

/** What bash makes of `word`: the bytes `printf %s` writes for it. */
function bashBytes(word: string): Buffer {
  return execFileSync('bash', ['--norc', '--noprofile', '-c', `printf %s ${word}`], {
    env: { PATH: process.env.PATH ?? '', LC_ALL: 'C' },
  });
}

const C0 = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1));
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i));
const INVISIBLE = [
  '\u00ad',
  '\u034f',
  '\u061c',
  '\u115f',
  '\u1160',
  '\u180e',
  '\u200b',
  '\u200d',
  '\u202e',
  '\u2028',
  '\u2029',
  '\u2066',
  '\u3164',
  '\ufe0f',
  '\ufeff',
  '\uffa0',
  '\u{e0041}',
  '\u{e0100}',
  '\u2800',
];

describe('shellWord', () => {
  it('keeps printable text between single quotes, with a quote closed and reopened', () => {
    expect(shellWord('plain text')).toBe("'plain text'");
    expect(shellWord("it's $HOME `id` !! \\ é 🙂")).toBe("'it'\\''s $HOME `id` !! \\ é 🙂'");
  });

  it.each([
    ['C0 controls', C0],
    ['DEL', ['\x7f']],
    ['C1 controls', C1],
    ['invisible and format characters', INVISIBLE],
  ])("writes %s as \\x escapes inside $'…', never as they are", (_name, chars) => {
    for (const char of chars) {
      const word = shellWord(`a${char}b`);
      expect(isPasteSafe(char)).toBe(false);
      expect(word.startsWith("$'")).toBe(true);
      // Printable ASCII only: nothing a terminal could act on or hide.
      expect(word).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it('turns the bracketed-paste escape of the security review into inert escapes', () => {
    const word = shellWord('x\x1b[201~\x15touch /tmp/pwned\r');
    expect(word).toBe("$'x\\x1b[201~\\x15touch /tmp/pwned\\x0d'");
  });

  it("escapes quotes, backslashes and ! inside $'…' (no history expansion, no early end)", () => {
    expect(shellWord("a'b\\c!d\x01")).toBe("$'a\\x27b\\\\c\\x21d\\x01'");
  });

  it('refuses NUL, which no argument can carry', () => {
    expect(() => shellWord('a\0b')).toThrow(/NUL/);
  });

  it('stands for exactly the original bytes when bash reads it, whatever the locale', () => {
    const texts = [
      C0.join(''),
      C1.join(''),
      INVISIBLE.join(''),
      '\x7f',
      'quotes \' " \\ and $(id) `id` !! ${HOME} *?[a] {1,2} ~ # ; & |',
      'é ✓ 🙂 \u{1f469}\u200d\u{1f4bb} mixed\ttab\nnewline\r\n',
    ];
    for (const text of texts) {
      expect(bashBytes(shellWord(text)).equals(Buffer.from(text, 'utf8'))).toBe(true);
    }
  });
});
