// Text on its way to a terminal (the CLI's output, config messages): what a
// payload or a file could hide in it is made visible.

/**
 * Characters a payload must not send to a terminal: C0 and C1 controls
 * (escape sequences, carriage returns, bells), DEL, bidirectional
 * overrides and isolates (text that reads differently than it is), line
 * and paragraph separators, zero-width characters and the BOM.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** Makes text safe to print: every unsafe character becomes a visible escape such as `\e`, `\x9b` or `\u202e`. */
export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const named = NAMED[char];
    if (named !== undefined) return named;
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

const UNSAFE_BEYOND_ASCII = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/gu;

/**
 * Compact JSON made safe for a terminal without changing what it means:
 * JSON.stringify already escapes C0 controls; the other unsafe characters
 * can only be inside strings, where `\uXXXX` is the same character.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(UNSAFE_BEYOND_ASCII, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}
