import { describe, expect, it } from 'vitest';
import { prettyLine } from '../../../src/platform/observe/pretty-log.js';

const at = '2026-11-25T17:11:15.226Z';
const local = (): string => {
  const date = new Date(at);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
};

const line = (entry: Record<string, unknown>): string =>
  `${JSON.stringify({ level: 30, time: at, service: 'reception', ...entry })}\n`;

describe('the log for a terminal', () => {
  it('a webhook: time, status, source, event type, size, id, and the outcome unless stored', () => {
    const stored = line({
      msg: 'webhook',
      status: 200,
      source: 'github',
      eventType: 'push',
      size: 1300,
      id: 'abc',
      outcome: 'stored',
    });
    expect(prettyLine(stored, { color: false })).toBe(`${local()}  200  github  push  1.3 KiB  abc\n`);
    const refused = line({
      msg: 'webhook',
      status: 401,
      source: 'stripe',
      size: 512,
      outcome: 'signature_invalid',
      verification: { status: 'failed', scheme: 'stripe', reason: 'no signature matched' },
    });
    expect(prettyLine(refused, { color: false })).toBe(
      `${local()}  401  stripe  512 B  -  signature_invalid (no signature matched)\n`,
    );
  });

  it('a request to the API, and any other entry with its fields as key=value', () => {
    const request = line({
      msg: 'request',
      status: 200,
      ms: 3.2,
      req: { method: 'GET', path: '/api/deliveries', remoteAddress: '127.0.0.1' },
    });
    expect(prettyLine(request, { color: false })).toBe(`${local()}  200  GET /api/deliveries  3.2 ms\n`);
    const warning = line({ level: 40, msg: 'RECEPTION_X is ignored', variable: 'RECEPTION_X' });
    expect(prettyLine(warning, { color: false })).toBe(`${local()}  WARN  RECEPTION_X is ignored  variable=RECEPTION_X\n`);
  });

  it("escapes a sender's text, so that a hostile source name or path cannot drive the terminal", () => {
    const hostile = line({
      msg: 'webhook',
      status: 200,
      source: 'evil\u001b[2J\u202esource',
      size: 1,
      id: 'x',
      outcome: 'stored',
    });
    const shown = prettyLine(hostile, { color: false });
    expect(shown).toContain('evil\\e[2J\\u202esource');
    // eslint-disable-next-line no-control-regex
    expect(shown.trimEnd()).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/u);
  });

  it('colours the status on a terminal (5xx red, 4xx yellow, 2xx green), and only then', () => {
    const failed = line({ msg: 'webhook', status: 503, source: 's', size: 1, outcome: 'storage_unavailable' });
    expect(prettyLine(failed, { color: true })).toContain('\u001b[31m503\u001b[39m');
    expect(prettyLine(failed, { color: false })).not.toContain('\u001b');
  });

  it('passes on a line that is not a JSON object as it is', () => {
    expect(prettyLine('not json\n', { color: false })).toBe('not json\n');
  });
});
