import { describe, expect, it } from 'vitest';
import type { DeliveryJson } from '../../../src/api/schemas.js';
import type { RefusalJson } from '../../../src/api/refusal-schemas.js';
import { deliveryColumns, deliveryLine } from '../../../src/cli/delivery-line.js';
import { refusalColumns, refusalLine } from '../../../src/cli/tail-refused.js';
import { displayWidth } from '../../../src/platform/text/display-width.js';

// Terminal controls: C0 (but for the line break), DEL, C1, and the bidirectional overrides.
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function delivery(fields: Partial<DeliveryJson>): DeliveryJson {
  return {
    id: '01970c1f-0291-70e3-9a4b-5c6d7e8f9a0b',
    seq: 1,
    source: 'github',
    eventType: null,
    receivedAt: '2026-11-27T10:00:00.000Z',
    method: 'POST',
    query: '',
    contentType: 'application/json',
    size: 8,
    remoteAddress: '127.0.0.1',
    headers: [],
    body: { n: 1 },
    verification: { status: 'none' },
    forwards: [],
    ...fields,
  };
}

/** The display column where `cell` starts in `line` (counted as a terminal draws it). */
function columnOf(line: string, cell: string): number {
  const at = line.indexOf(cell);
  expect(at, `${cell} in ${line}`).toBeGreaterThanOrEqual(0);
  return displayWidth(line.slice(0, at));
}

describe("reception tail's lines", () => {
  it('line up their columns whatever the source, event type, method, size and verification', () => {
    const columns = deliveryColumns();
    const all = [
      delivery({ source: 'github', eventType: 'push', size: 8 }),
      delivery({ source: 'stripe-live', eventType: 'invoice.payment_succeeded', method: 'PUT', size: 123_456 }),
      delivery({ source: '日本の店', eventType: null, method: 'DELETE', size: 0, body: null }),
      delivery({ source: 'a', eventType: 'x', verification: { status: 'verified', scheme: 'github' } }),
      delivery({ source: 'evil\u202esource', eventType: 'e\u001b[31m', method: 'PATCH' }),
      delivery({ source: 'shop', eventType: 'order.paid' }),
    ];
    // The second pass: each column as wide as its widest cell by then.
    for (const d of all) deliveryLine(d, 200, columns);
    const lines = all.map((d) => deliveryLine(d, 200, columns));
    for (const line of lines) expect(line).not.toMatch(TERMINAL_CONTROL);
    expect(lines[4]).toContain('evil\\u202esource');
    expect(lines[4]).toContain('e\\e[31m');
    // Each cell of a line starts where the same cell of the first line does.
    const [first] = lines;
    const methodAt = columnOf(first ?? '', 'POST');
    const idAt = columnOf(first ?? '', all[0]?.id ?? '');
    const bodyAt = columnOf(first ?? '', '{"n":1}');
    lines.forEach((line, i) => {
      const d = all[i] ?? delivery({});
      expect(columnOf(line, d.method), line).toBe(methodAt);
      expect(columnOf(line, d.id), line).toBe(idAt);
      if (d.body !== null) expect(columnOf(line, '{"n":1}'), line).toBe(bodyAt);
    });
    // Sizes line up on the right, just before the id.
    for (const line of lines) expect(line.slice(0, line.indexOf('01970c1f')).trimEnd()).toMatch(/\d (B|KiB)$/);
    expect(lines[1]).toMatch(/ 120\.6 KiB {2}01970c1f/);
  });

  it('keep a hostile name that is too long from pushing every later line: it overflows its own', () => {
    const columns = deliveryColumns();
    const normal = deliveryLine(delivery({ source: 'shop' }), 200, columns);
    const long = deliveryLine(delivery({ source: 'x'.repeat(60) }), 200, columns);
    const after = deliveryLine(delivery({ source: 'shop' }), 200, columns);
    expect(after).toBe(normal);
    expect(long.indexOf('POST')).toBeGreaterThan(normal.indexOf('POST'));
  });

  it('refusals line up too', () => {
    const refusal = (fields: Partial<RefusalJson>): RefusalJson =>
      ({
        seq: 1,
        receivedAt: '2026-11-27T10:00:00.000Z',
        source: 'stripe',
        method: 'POST',
        status: 415,
        code: 'unsupported_media_type',
        size: 12,
        detail: 'This body kind is not known.',
        bodyPreview: 'hello',
        ...fields,
      }) as RefusalJson;
    const columns = refusalColumns();
    const all = [
      refusal({}),
      refusal({ source: null, method: 'GET', status: 400, code: 'invalid_source', size: 2048 }),
      refusal({ source: 'github-enterprise', status: 401, code: 'signature_invalid' }),
    ];
    for (const r of all) refusalLine(r, 200, columns);
    const lines = all.map((r) => refusalLine(r, 200, columns));
    const detailAt = columnOf(lines[0] ?? '', 'This body');
    for (const line of lines) expect(columnOf(line, 'This body'), line).toBe(detailAt);
    const statusAt = columnOf(lines[0] ?? '', '415');
    expect(columnOf(lines[1] ?? '', '400'), lines[1]).toBe(statusAt);
    expect(columnOf(lines[2] ?? '', '401'), lines[2]).toBe(statusAt);
  });
});
