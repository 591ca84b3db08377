import { describe, expect, it } from 'vitest';
import { LONGEST_ARGUMENT, resendCommand } from '../../../web/src/curl-command.js';
import type { Delivery } from '../../../web/src/delivery.js';

const ORIGIN = 'http://127.0.0.1:8080';

function delivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: 'x',
    seq: 1,
    source: 'src',
    eventType: null,
    receivedAt: '',
    method: 'POST',
    query: '',
    contentType: 'application/json',
    size: 0,
    remoteAddress: '',
    body: null,
    verification: { status: 'none' },
    headers: [],
    forwards: [],
    ...overrides,
  };
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/**
 * Nothing in the command that a terminal could act on or a reader not see:
 * the only control character is the newline of each ` \` continuation.
 */
function expectPasteSafe(command: string): void {
  const joined = command.replaceAll(' \\\n  ', ' ');
  expect(joined).not.toMatch(/[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/u);
}

const C0 = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('');
const ATTACK = 'a=x\x1b[201~\x15touch /tmp/pwned\r&b=1';

describe('resendCommand puts no control or invisible character into the terminal', () => {
  it.each([
    ['the attack of the security review', ATTACK],
    ['every C0 control but NUL', C0],
    ['DEL', 'a\x7fb'],
    ['every C1 control', C1],
    ['invisible and bidirectional characters', 'a\u200bb\u202ec\u2066d\ufeffe\u3164f'],
  ])('in the body: %s', (_name, text) => {
    const command = resendCommand(ORIGIN, delivery({ contentType: 'application/x-www-form-urlencoded' }), encode(text));
    expectPasteSafe(command);
    expect(command).toContain("--data-raw $'");
  });

  it('a body with NUL goes through base64', () => {
    const command = resendCommand(ORIGIN, delivery(), encode('a\0\x1b[201~b'));
    expectPasteSafe(command);
    expect(command).toMatch(/^printf %s '[A-Za-z0-9+/=]+' \| base64 -d \| curl /);
  });

  it.each([
    ['C0 (tab, ESC)', 'a\tb\x1b[201~'],
    ['DEL', 'a\x7f'],
    ['C1 (as the Latin-1 reading of bytes 0x80 to 0x9f)', C1],
    ['invisible characters', 'sha256=abc\u200b'],
  ])('in a header value: %s', (_name, value) => {
    const command = resendCommand(ORIGIN, delivery({ headers: [['X-Signature', value]] }), encode('{}'));
    expectPasteSafe(command);
    expect(command).toContain("-H $'X-Signature: ");
  });

  it('in the Content-Type, the method and the query string', () => {
    const command = resendCommand(
      ORIGIN,
      delivery({
        contentType: 'application/json\x1b[201~',
        method: 'PUT\u009b',
        query: `a=1\x1b[201~\x15\r${C1}\u202e`,
      }),
      encode('{}'),
    );
    expectPasteSafe(command);
  });

  it('in the source name (percent-encoded in the URL anyway)', () => {
    const command = resendCommand(ORIGIN, delivery({ source: 'stripe\u200b\u202e' }), encode('{}'));
    expectPasteSafe(command);
    expect(command).toContain('/api/webhook/stripe%E2%80%8B%E2%80%AE');
  });

  it('keeps printable bodies readable between single quotes', () => {
    const command = resendCommand(ORIGIN, delivery(), encode('{"a": "it\'s é ✓"}'));
    expect(command).toContain(`--data-raw '{"a": "it'\\''s é ✓"}'`);
  });

  it('sends a long body through printf and a pipe, not as one argument of curl', () => {
    const long = `{"a": "${'x'.repeat(LONGEST_ARGUMENT)}\x1b"}`;
    const command = resendCommand(ORIGIN, delivery(), encode(long));
    expectPasteSafe(command);
    expect(command.startsWith("printf %s $'")).toBe(true);
    expect(command).toContain('--data-binary @-');
    expect(command).not.toContain('--data-raw');
  });
});
