import { describe, expect, it } from 'vitest';
import { escapeForTerminal, escapeJsonForTerminal } from '../../../src/platform/text/terminal-safe.js';

describe('escapeForTerminal', () => {
  it('escapes C0, DEL and C1 controls, with names for the common ones', () => {
    expect(escapeForTerminal('a\x1b[201~\x15b\r\n\t\x00\x7f\u0085\u009b')).toBe('a\\e[201~\\x15b\\r\\n\\t\\x00\\x7f\\x85\\x9b');
  });

  it('escapes invisible and format characters that would make one source name look like another', () => {
    expect(escapeForTerminal('stripe\u200b')).toBe('stripe\\u200b');
    expect(escapeForTerminal('\u202eevil')).toBe('\\u202eevil');
    expect(escapeForTerminal('a\u3164b\u115fc\u00add\u034fe\ufe0ff\u180eg\u2060h\u{e0041}')).toBe(
      'a\\u3164b\\u115fc\\xadd\\u034fe\\ufe0ff\\u180eg\\u2060h\\u{e0041}',
    );
  });

  it('leaves letters of any script and whole emoji alone', () => {
    expect(escapeForTerminal('ѕtripe café 日本 \u2764\ufe0f \u{1f468}\u200d\u{1f469}\u200d\u{1f467}')).toBe(
      'ѕtripe café 日本 \u2764\ufe0f \u{1f468}\u200d\u{1f469}\u200d\u{1f467}',
    );
  });
});

describe('escapeJsonForTerminal', () => {
  it('writes DEL, C1 and invisible characters as \\u escapes and stays the same JSON', () => {
    const value = { 'k\u202e': 'v\u200b\u009b\u007f\u3164\u{e0041}', ok: 'é \u2764\ufe0f' };
    const escaped = escapeJsonForTerminal(JSON.stringify(value));
    expect(escaped).not.toMatch(/[\u007f-\u009f\u200b\u202e\u3164\u{e0041}]/u);
    expect(escaped).toContain('\\udb40\\udc41');
    expect(JSON.parse(escaped)).toEqual(value);
  });
});
