import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { problemCatalogue, problemFor, ProblemError, type ProblemCode } from '../../src/platform/errors/problem-catalogue.js';

const DOCS = new URL('../../docs/errors.md', import.meta.url);
const codes = Object.keys(problemCatalogue) as ProblemCode[];

/** The `| status | \`code\` | …` rows of the tables in docs/errors.md. */
function documentedRows(): Map<string, number> {
  const rows = new Map<string, number>();
  for (const line of readFileSync(DOCS, 'utf8').split('\n')) {
    const match = /^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) rows.set(match[2], Number(match[1]));
  }
  return rows;
}

describe('the error catalogue', () => {
  it.each(codes)('documents %s in docs/errors.md with its status', (code) => {
    const rows = documentedRows();
    expect(rows.has(code), `docs/errors.md has no table row for \`${code}\``).toBe(true);
    expect(rows.get(code)).toBe(problemCatalogue[code].status);
  });

  it('documents no code that the catalogue does not have', () => {
    const stale = [...documentedRows().keys()].filter((code) => !codes.includes(code as ProblemCode));
    expect(stale).toEqual([]);
  });

  it('uses snake_case codes and error statuses', () => {
    for (const code of codes) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      const { status, title } = problemCatalogue[code];
      expect(status >= 400 && status <= 599).toBe(true);
      expect(title.length).toBeGreaterThan(0);
    }
  });

  it('builds RFC 9457 problems with the catalogue status and title', () => {
    expect(problemFor('payload_too_large', 'Too big.')).toEqual({
      type: 'urn:reception:problem:payload_too_large',
      title: 'Payload too large',
      status: 413,
      detail: 'Too big.',
      code: 'payload_too_large',
    });
    const error = new ProblemError('rate_limited', 'Slow down.', { 'retry-after': '1' });
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'retry-after': '1' });
    expect(error.toProblem()).toMatchObject({ status: 429, code: 'rate_limited', detail: 'Slow down.' });
  });
});
